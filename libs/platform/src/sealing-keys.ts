import { Keyring, parseKeyring, singleKeyring } from '@ds/sealing';
import { EnvReader } from './config';

/** The keys a service seals its secrets at rest with. */
export interface SealingKeys {
  /** The first key seals; every key opens. */
  keyring: Keyring;
  /** True when the public development key stands in, which only the all-in-one launcher asks for. */
  development: boolean;
}

/**
 * Reads a keyring (`id:base64,…`) from `variable`. Without it the service refuses to start unless `devSwitch` is
 * true: a pod that forgot its key would otherwise seal customers' secrets under a key printed in the source.
 */
export function readSealingKeys(env: EnvReader, variable: string, devSwitch: string, developmentKey: Buffer): SealingKeys {
  const raw = env.string(variable);
  const developmentAllowed = env.bool(devSwitch, false);
  if (raw !== undefined) {
    const parsed = parseKeyring(raw);
    if (!('problem' in parsed)) return { keyring: parsed, development: false };
    env.fail(variable, parsed.problem);
  } else if (!developmentAllowed) {
    env.fail(variable, `is required (openssl rand -base64 32); only the all-in-one launcher runs without it, with ${devSwitch}=true`);
  }
  return { keyring: singleKeyring(developmentKey), development: raw === undefined };
}

import { randomBytes } from 'node:crypto';
import { Keyring, parseKeyring } from '@ds/sealing';

/** A new random key as a keyring variable spells it (base64 of 32 bytes). */
export const randomKeyText = (): string => randomBytes(32).toString('base64');

/** The keyring a `*_KEY` variable holding `raw` gives the service; a spec's own typo fails loudly. */
export function keyring(raw: string): Keyring {
  const parsed = parseKeyring(raw);
  if ('problem' in parsed) throw new Error(parsed.problem);
  return parsed;
}

/** What `work` was refused with; fails the spec when it succeeds. */
export async function refusal(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected a refusal');
}

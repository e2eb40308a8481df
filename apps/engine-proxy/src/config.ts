import { EngineName } from '@ds/contracts';
import { CredentialsKeyring, DEV_CREDENTIALS_KEY, DEFAULT_PRICES, parseCredentialsKeyring, PriceTable, singleKeyring } from '@ds/engine';
import { EnvReader } from '@ds/platform';

export interface ProviderEndpoint {
  protocol: 'anthropic' | 'openai';
  baseUrl: string;
  apiKey: string | null;
  model: string | null;
}

export interface EngineProxyConfig {
  defaultEngine: EngineName;
  llm: ProviderEndpoint;
  checkpoint: ProviderEndpoint;
  sharedSlots: number;
  prices: PriceTable;
  /** Redis for shared-key slots counted across replicas; null counts them in this process only. */
  redisUrl: string | null;
  /** AES-256-GCM keys for workspaces' own provider keys at rest: the first seals, every one opens. */
  credentialsKeys: CredentialsKeyring;
  /** True when the public development key stands in (ENGINE_CREDENTIALS_DEV_KEY, set by the all-in-one launcher). */
  credentialsKeyIsDev: boolean;
}

export function readEngineProxyConfig(env: EnvReader): EngineProxyConfig {
  const provider = env.oneOf('ENGINE_LLM_PROVIDER', 'anthropic', ['anthropic', 'openai'] as const);
  const pricesRaw = env.string('ENGINE_PRICES_JSON');
  let prices = DEFAULT_PRICES;
  if (pricesRaw !== undefined) {
    try {
      prices = { ...DEFAULT_PRICES, ...(JSON.parse(pricesRaw) as PriceTable) };
    } catch {
      env.fail('ENGINE_PRICES_JSON', 'must be a JSON object of model name to USD per million input tokens');
    }
  }
  const credentialsRaw = env.string('ENGINE_CREDENTIALS_KEY');
  const devKeyAllowed = env.bool('ENGINE_CREDENTIALS_DEV_KEY', false);
  let credentialsKeys = singleKeyring(DEV_CREDENTIALS_KEY);
  if (credentialsRaw !== undefined) {
    const parsed = parseCredentialsKeyring(credentialsRaw);
    if ('problem' in parsed) env.fail('ENGINE_CREDENTIALS_KEY', parsed.problem);
    else credentialsKeys = parsed;
  } else if (!devKeyAllowed) {
    // A pod that forgot its key would otherwise seal customers' provider keys under a key printed in the source.
    env.fail(
      'ENGINE_CREDENTIALS_KEY',
      'is required (openssl rand -base64 32); only the all-in-one launcher runs without it, with ENGINE_CREDENTIALS_DEV_KEY=true',
    );
  }
  return {
    defaultEngine: env.oneOf('ENGINE_DEFAULT', 'llm', ['llm', 'checkpoint'] as const),
    llm: {
      protocol: provider,
      baseUrl: env.url('ENGINE_LLM_BASE_URL', provider === 'anthropic' ? 'https://api.anthropic.com' : 'https://api.openai.com/v1', ['http', 'https']),
      apiKey: env.string('ENGINE_LLM_API_KEY') ?? null,
      model: env.string('ENGINE_LLM_MODEL') ?? null,
    },
    checkpoint: {
      protocol: 'openai',
      baseUrl: env.url('ENGINE_CHECKPOINT_BASE_URL', undefined, ['http', 'https']) ?? '',
      apiKey: env.string('ENGINE_CHECKPOINT_API_KEY') ?? null,
      model: env.string('ENGINE_CHECKPOINT_MODEL') ?? null,
    },
    sharedSlots: env.int('ENGINE_SHARED_SLOTS', 32, 1, 100_000),
    prices,
    redisUrl: env.url('REDIS_URL', undefined, ['redis', 'rediss']) ?? null,
    credentialsKeys,
    credentialsKeyIsDev: credentialsRaw === undefined,
  };
}

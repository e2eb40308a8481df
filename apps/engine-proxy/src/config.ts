import { EngineName } from '@ds/contracts';
import { DEV_CREDENTIALS_KEY, DEFAULT_PRICES, PriceTable } from '@ds/engine';
import { EnvReader, readSealingKeys } from '@ds/platform';
import { Keyring } from '@ds/sealing';

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
  /**
   * Calls that may wait for a shared-key slot in one process; a call past it is refused at once (503
   * ENGINE_RATE_LIMITED with Retry-After) rather than left to wait to its deadline behind calls that will not all
   * get a slot in time either.
   */
  slotQueue: number;
  prices: PriceTable;
  /** Redis for shared-key slots counted across replicas; null counts them in this process only. */
  redisUrl: string | null;
  /** AES-256-GCM keys for workspaces' own provider keys at rest: the first seals, every one opens. */
  credentialsKeys: Keyring;
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
  const sharedSlots = env.int('ENGINE_SHARED_SLOTS', 32, 1, 100_000);
  const credentials = readSealingKeys(env, 'ENGINE_CREDENTIALS_KEY', 'ENGINE_CREDENTIALS_DEV_KEY', DEV_CREDENTIALS_KEY);
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
    sharedSlots,
    slotQueue: env.int('ENGINE_SLOT_QUEUE', Math.max(64, 2 * sharedSlots), 0, 1_000_000),
    prices,
    redisUrl: env.url('REDIS_URL', undefined, ['redis', 'rediss']) ?? null,
    credentialsKeys: credentials.keyring,
    credentialsKeyIsDev: credentials.development,
  };
}

import { z } from 'zod';
import type { LlmProvider } from '../engine-proxy';

// A workspace's own provider key and engine settings (`/app/v1/workspaces/{ws}/provider-key`, `/engine-settings`).
// Checked by the gateway before anything is forwarded: the engine proxy receives only keys of this shape.

export const PROVIDERS = ['anthropic', 'openai'] as const satisfies readonly LlmProvider[];

export const PROVIDER_KEY_MIN = 8;
export const PROVIDER_KEY_MAX = 512;
/** Printable ASCII without spaces: anything else could not travel in an HTTP header anyway. */
const PROVIDER_KEY_PATTERN = /^[\x21-\x7e]+$/;
const KEY_LENGTH = `must be ${PROVIDER_KEY_MIN} to ${PROVIDER_KEY_MAX} characters`;

/** A provider's API key as it may be saved or tested. */
export const PROVIDER_KEY = z
  .string({ error: 'must be a string' })
  .refine((key) => key.length >= PROVIDER_KEY_MIN && key.length <= PROVIDER_KEY_MAX, { error: KEY_LENGTH, abort: true })
  .regex(PROVIDER_KEY_PATTERN, { error: 'must be printable ASCII without spaces' });

/** PUT …/provider-key, and POST …/provider-key/test when it names a key (else the saved one is tested). */
/** What a refused provider key answers, at the gateway and again at the engine proxy. */
export const PROVIDER_KEY_INVALID = 'The provider key is not valid.';

export const PROVIDER_KEY_BODY = z.object({
  provider: z.enum(PROVIDERS, { error: 'must be anthropic or openai' }),
  api_key: PROVIDER_KEY,
});

/** PUT …/engine-settings: each setting optional, at least one given; `default_engine: null` is back to the service's default. */
export const ENGINE_SETTINGS_BODY = z
  .object({
    use_own_key: z.boolean({ error: 'must be true or false' }).optional(),
    default_engine: z.enum(['llm', 'checkpoint'], { error: 'must be llm, checkpoint or null' }).nullable().optional(),
  })
  .superRefine((body, ctx) => {
    if (body.use_own_key === undefined && body.default_engine === undefined)
      ctx.addIssue({ code: 'custom', message: 'give use_own_key, default_engine or both', input: body });
  });

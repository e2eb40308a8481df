import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Workspaces' own provider keys, encrypted at rest with AES-256-GCM. A sealed value is
 * `iv (12 bytes) ‖ tag (16 bytes) ‖ ciphertext`; the additional data binds it to its workspace and
 * provider, so a row copied onto another workspace does not decrypt.
 */

export const PROVIDERS = ['anthropic', 'openai'] as const;
export type Provider = (typeof PROVIDERS)[number];

export const PROVIDER_KEY_MIN = 8;
export const PROVIDER_KEY_MAX = 512;
/** Printable ASCII without spaces: anything else could not travel in an HTTP header anyway. */
const PROVIDER_KEY_PATTERN = /^[\x21-\x7e]+$/;

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Used only when ENGINE_CREDENTIALS_KEY is unset; derived from public text, so it protects nothing. */
export const DEV_CREDENTIALS_KEY = createHash('sha256').update('decision-service development credentials key (not a secret)').digest();

export function isProvider(value: unknown): value is Provider {
  return typeof value === 'string' && (PROVIDERS as readonly string[]).includes(value);
}

/** Why a provider key is refused, or null when it is acceptable. */
export function providerKeyProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'must be a string';
  if (value.length < PROVIDER_KEY_MIN || value.length > PROVIDER_KEY_MAX) return `must be ${PROVIDER_KEY_MIN} to ${PROVIDER_KEY_MAX} characters`;
  if (!PROVIDER_KEY_PATTERN.test(value)) return 'must be printable ASCII without spaces';
  return null;
}

/** The last four characters, the only part of a saved key ever shown again. */
export function lastFour(apiKey: string): string {
  return apiKey.slice(-4);
}

/** A 32-byte key from its base64 form, or null when it is not exactly that. */
export function parseCredentialsKey(base64: string): Buffer | null {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(base64)) return null;
  const key = Buffer.from(base64, 'base64');
  return key.length === 32 ? key : null;
}

/** Names the key that sealed a value without revealing it, so a value sealed under another key is recognised. */
export function credentialsKeyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}

export function credentialAad(workspaceId: string, provider: Provider): Buffer {
  return Buffer.from(`provider_credentials:${workspaceId}:${provider}`);
}

export function sealCredential(key: Buffer, plaintext: string, aad: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
}

/** The plaintext, or null when the value was sealed under another key, for another row, or altered. */
export function openCredential(key: Buffer, sealed: Buffer, aad: Buffer): string | null {
  if (sealed.length < IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
    decipher.setAAD(aad);
    decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

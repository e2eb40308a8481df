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

/**
 * Every key that may have sealed a stored value, each under an id stored beside its ciphertext. The first
 * key seals; all of them open. Rotating means putting a new key first and keeping the old ones until
 * every stored value has been sealed again under the new one.
 */
export interface CredentialsKeyring {
  primaryId: string;
  keys: ReadonlyMap<string, Buffer>;
}

const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** A keyring of one key, named by its fingerprint (how values sealed before key ids were named are recognised). */
export function singleKeyring(key: Buffer): CredentialsKeyring {
  const id = credentialsKeyId(key);
  return { primaryId: id, keys: new Map([[id, key]]) };
}

/**
 * Reads `id:base64[,id:base64…]`; a key given without an id is named by its fingerprint, so a single bare
 * key (the earlier form) keeps opening the values it sealed. Answers the keyring or why it is refused.
 */
export function parseCredentialsKeyring(raw: string): CredentialsKeyring | { problem: string } {
  const keys = new Map<string, Buffer>();
  let primaryId: string | null = null;
  for (const entry of raw.split(',').map((part) => part.trim())) {
    if (entry === '') return { problem: 'has an empty entry' };
    const separator = entry.indexOf(':');
    const encoded = separator === -1 ? entry : entry.slice(separator + 1);
    const key = parseCredentialsKey(encoded);
    if (key === null) return { problem: 'must hold keys of 32 bytes in base64 (for example: openssl rand -base64 32), as id:key,id:key' };
    const id = separator === -1 ? credentialsKeyId(key) : entry.slice(0, separator);
    if (!KEY_ID_PATTERN.test(id)) return { problem: 'has a key id that is not 1 to 64 letters, digits, dots, dashes or underscores' };
    if (keys.has(id)) return { problem: `names key id ${id} twice` };
    keys.set(id, key);
    primaryId ??= id;
  }
  if (primaryId === null) return { problem: 'holds no key' };
  return { primaryId, keys };
}

/** The key a stored value names: by its id, or by fingerprint for values sealed before the key had an id. */
export function keyForId(keyring: CredentialsKeyring, keyId: string): Buffer | null {
  const named = keyring.keys.get(keyId);
  if (named) return named;
  for (const key of keyring.keys.values()) if (credentialsKeyId(key) === keyId) return key;
  return null;
}

export function sealWithKeyring(keyring: CredentialsKeyring, plaintext: string, aad: Buffer): { sealed: Buffer; keyId: string } {
  const key = keyring.keys.get(keyring.primaryId) as Buffer;
  return { sealed: sealCredential(key, plaintext, aad), keyId: keyring.primaryId };
}

/** The plaintext, or null when no key of the ring carries that id or the value does not open under it. */
export function openWithKeyring(keyring: CredentialsKeyring, keyId: string, sealed: Buffer, aad: Buffer): string | null {
  const key = keyForId(keyring, keyId);
  return key === null ? null : openCredential(key, sealed, aad);
}

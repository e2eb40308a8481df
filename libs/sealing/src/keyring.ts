import { openValue, parseSealingKey, sealingKeyFingerprint, sealValue } from './sealing';

/**
 * Every key that may have sealed a stored value, each under an id stored beside its ciphertext. The first
 * key seals; all of them open. Rotating means putting a new key first and keeping the old ones until
 * every stored value has been sealed again under the new one.
 */
export interface Keyring {
  primaryId: string;
  keys: ReadonlyMap<string, Buffer>;
}

const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** A keyring of one key, named by its fingerprint (how values sealed before key ids were named are recognised). */
export function singleKeyring(key: Buffer): Keyring {
  const id = sealingKeyFingerprint(key);
  return { primaryId: id, keys: new Map([[id, key]]) };
}

/**
 * Reads `id:base64[,id:base64…]`; a key given without an id is named by its fingerprint, so a single bare
 * key keeps opening the values it sealed. Answers the keyring or why it is refused, in words that name no key
 * material.
 */
export function parseKeyring(raw: string): Keyring | { problem: string } {
  const keys = new Map<string, Buffer>();
  let primaryId: string | null = null;
  for (const entry of raw.split(',').map((part) => part.trim())) {
    if (entry === '') return { problem: 'has an empty entry' };
    const separator = entry.indexOf(':');
    const encoded = separator === -1 ? entry : entry.slice(separator + 1);
    const key = parseSealingKey(encoded);
    if (key === null) return { problem: 'must hold keys of 32 bytes in base64 (for example: openssl rand -base64 32), as id:key,id:key' };
    const id = separator === -1 ? sealingKeyFingerprint(key) : entry.slice(0, separator);
    if (!KEY_ID_PATTERN.test(id)) return { problem: 'has a key id that is not 1 to 64 letters, digits, dots, dashes or underscores' };
    if (keys.has(id)) return { problem: `names key id ${id} twice` };
    keys.set(id, key);
    primaryId ??= id;
  }
  if (primaryId === null) return { problem: 'holds no key' };
  return { primaryId, keys };
}

/** The key a stored value names: by its id, or by fingerprint for values sealed before the key had an id. */
export function keyForId(keyring: Keyring, keyId: string): Buffer | null {
  const named = keyring.keys.get(keyId);
  if (named) return named;
  for (const key of keyring.keys.values()) if (sealingKeyFingerprint(key) === keyId) return key;
  return null;
}

export function sealWithKeyring(keyring: Keyring, plaintext: string, aad: Buffer): { sealed: Buffer; keyId: string } {
  const key = keyring.keys.get(keyring.primaryId) as Buffer;
  return { sealed: sealValue(key, plaintext, aad), keyId: keyring.primaryId };
}

/** The plaintext, or null when no key of the ring carries that id or the value does not open under it. */
export function openWithKeyring(keyring: Keyring, keyId: string, sealed: Buffer, aad: Buffer): string | null {
  const key = keyForId(keyring, keyId);
  return key === null ? null : openValue(key, sealed, aad);
}

import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Values kept encrypted at rest with AES-256-GCM. A sealed value is `iv (12 bytes) ‖ tag (16 bytes) ‖ ciphertext`;
 * the additional data names the row the value belongs to, so a value copied onto another row does not open.
 */

const IV_BYTES = 12;
const TAG_BYTES = 16;
export const SEALING_KEY_BYTES = 32;

/**
 * A key derived from public text, for laptops and demos only: anyone can compute it, so it protects nothing.
 * Each use names its own purpose so that two services never share one.
 */
export function developmentKey(purpose: string): Buffer {
  return createHash('sha256').update(`decision-service development ${purpose} key (not a secret)`).digest();
}

/** A 32-byte key from its base64 form, or null when it is not exactly that. */
export function parseSealingKey(base64: string): Buffer | null {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(base64)) return null;
  const key = Buffer.from(base64, 'base64');
  return key.length === SEALING_KEY_BYTES ? key : null;
}

/** Names a key without revealing it, so a value sealed under a key given without an id is still recognised. */
export function sealingKeyFingerprint(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}

export function sealValue(key: Buffer, plaintext: string, aad: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
}

/** The plaintext, or null when the value was sealed under another key, for another row, or altered. */
export function openValue(key: Buffer, sealed: Buffer, aad: Buffer): string | null {
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
 * The additional data of a value: what kind of value it is and the ids of the row that holds it, joined so that
 * no two rows share it. Ids never contain the separator.
 */
export function rowAad(kind: string, ...ids: readonly string[]): Buffer {
  return Buffer.from([kind, ...ids].join(':'));
}

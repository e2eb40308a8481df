import { randomInt } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Letters and digits drawn without modulo bias, so every id carries log2(62) bits per character. */
export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

export type IdPrefix = 'dec' | 'exec' | 'key' | 'dlv' | 'req' | 'emb' | 'usr' | 'ws' | 'ses' | 'ent' | 'inv' | 'rpl' | 'lease' | 'rev';

/** Letters and digits after the prefix of every id newId makes. */
const ID_RANDOM_LENGTH = 20;

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomAlphanumeric(ID_RANDOM_LENGTH)}`;
}

/** Whether a value has exactly the shape newId gives ids of this kind (where only ids made here are ever valid). */
export function isNewId(prefix: IdPrefix, value: unknown): value is string {
  return typeof value === 'string' && value.length === prefix.length + 1 + ID_RANDOM_LENGTH && looksLikeId(prefix, value);
}

/** Caller-supplied ids (X-Request-ID, Idempotency-Key): 1..128 of A-Za-z0-9._:- */
export const CALLER_TOKEN_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export function isValidCallerToken(value: unknown): value is string {
  return typeof value === 'string' && CALLER_TOKEN_PATTERN.test(value);
}

/**
 * Whether a value can be an id of this kind (`dlv_…`, `dec_…`): the prefix, then letters and digits. Ids that come
 * from a path or a query are checked before they reach a query, so that no byte PostgreSQL refuses (NUL) gets there.
 */
export function looksLikeId(prefix: IdPrefix, value: unknown): value is string {
  return typeof value === 'string' && value.length <= 68 && value.startsWith(`${prefix}_`) && /^[A-Za-z0-9]+$/.test(value.slice(prefix.length + 1));
}

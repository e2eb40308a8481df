import { createHash, randomBytes } from 'node:crypto';
import { randomAlphanumeric } from '@ds/ids';
import { KeyMode } from '../entities';

export const API_KEY_PATTERN = /^svc_(live|test)_[A-Za-z0-9]{32}$/;

/** 32 letters and digits: about 190 bits of randomness after the mode prefix. */
export function newApiKey(mode: KeyMode): string {
  return `svc_${mode}_${randomAlphanumeric(32)}`;
}

export function looksLikeApiKey(token: string): boolean {
  return token.startsWith('svc_live_') || token.startsWith('svc_test_');
}

export function newSessionToken(): string {
  return `ses_${randomBytes(32).toString('base64url')}`;
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

import { FastifyReply, FastifyRequest } from 'fastify';
import { EmbedSessionView, SUBJECTS } from '@ds/contracts';
import { frameAncestors } from '@ds/partner';
import { RpcClient } from '@ds/platform';

/** The embed session's cookie: host-only, so it is never sent to another host of the domain. */
export const EMBED_COOKIE = 'ds_embed';
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The embed cookie's token from a Cookie header, or null (the last one wins, as for any repeated cookie). */
export function embedToken(cookieHeader: string | undefined): string | null {
  if (!cookieHeader) return null;
  let token: string | null = null;
  for (const part of cookieHeader.split(';')) {
    const index = part.indexOf('=');
    if (index < 0 || part.slice(0, index).trim() !== EMBED_COOKIE) continue;
    const value = part.slice(index + 1).trim();
    token = TOKEN_PATTERN.test(value) ? value : null;
  }
  return token;
}

/**
 * `SameSite=None; Secure` lets the cookie travel inside a third-party iframe; `Partitioned` (CHIPS) keeps it
 * working where browsers block unpartitioned third-party cookies, keyed to the embedding site.
 */
export function embedCookie(token: string, expiresAt: string): string {
  const maxAge = Math.max(0, Math.floor((Date.parse(expiresAt) - Date.now()) / 1000));
  return `${EMBED_COOKIE}=${token}; Path=/; Max-Age=${maxAge}; HttpOnly; Secure; SameSite=None; Partitioned`;
}

export function clearedEmbedCookie(): string {
  return `${EMBED_COOKIE}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=None; Partitioned`;
}

/**
 * Beside the HttpOnly session cookie, one the page can see and that holds no secret: it tells the application
 * that an embed session may be there, so a signed-out page does not ask for one and log the API's 401.
 */
export const EMBED_HINT_COOKIE = 'ds_embed_hint';

export function embedHintCookie(expiresAt: string): string {
  const maxAge = Math.max(0, Math.floor((Date.parse(expiresAt) - Date.now()) / 1000));
  return `${EMBED_HINT_COOKIE}=1; Path=/; Max-Age=${maxAge}; Secure; SameSite=None; Partitioned`;
}

export function clearedEmbedHintCookie(): string {
  return `${EMBED_HINT_COOKIE}=; Path=/; Max-Age=0; Secure; SameSite=None; Partitioned`;
}

export async function lookUpEmbedSession(rpc: RpcClient, token: string, requestId: string): Promise<EmbedSessionView | null> {
  return rpc.call(SUBJECTS.partner.embedSession, { token }, { requestId });
}

/** Pages and answers of an embed session may be framed by its origins only. */
export function setFrameAncestors(reply: FastifyReply, origins: readonly string[]): void {
  reply.header('content-security-policy', frameAncestors(origins));
}

/**
 * A cookie travels with cross-site requests too. A state-changing request carried by the embed cookie must come
 * from the application's own pages: browsers say so in `Sec-Fetch-Site`, or (older ones) in `Origin`.
 */
export function isCrossSiteWrite(request: FastifyRequest): boolean {
  if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return false;
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string') return site !== 'same-origin';
  const origin = request.headers.origin;
  if (typeof origin !== 'string') return false;
  try {
    return new URL(origin).host !== request.headers.host;
  } catch {
    return true;
  }
}

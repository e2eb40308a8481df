import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** A signature's `t` may be this many seconds from the service's clock, either way. */
export const SIGNATURE_TOLERANCE_S = 300;

export interface ProofInput {
  /** The URL's `whsec_…` secret. */
  secret: string;
  /** The `Service-Signature` header as received. */
  signature: string | undefined;
  /** The `Authorization` header as received. */
  authorization: string | undefined;
  /** The request body exactly as received. */
  body: string;
  nowSeconds: number;
}

export type ProofResult = { ok: true; via: 'signature' | 'bearer' } | { ok: false; message: string };

export interface ParsedSignature {
  t: number;
  v1: string[];
}

/**
 * `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, as Stripe writes it: exactly one `t`, at least one `v1` of 64 hex
 * digits; other schemes (`v0=…`) are ignored. Null when the header cannot be read that way.
 */
export function parseSignature(header: string): ParsedSignature | null {
  let t: number | null = null;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return null;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === 't') {
      if (t !== null || !/^\d{1,12}$/.test(value)) return null;
      t = Number(value);
    } else if (name === 'v1') {
      if (!/^[0-9a-fA-F]{64}$/.test(value)) return null;
      v1.push(value.toLowerCase());
    }
  }
  return t === null || v1.length === 0 ? null : { t, v1 };
}

/** `hex(HMAC-SHA256(secret, "<t>." + body))`, the whole `whsec_…` string being the key. */
export function signPayload(secret: string, t: number, body: string): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body, 'utf8').digest('hex');
}

function bearerOf(authorization: string | undefined): string | null {
  if (!authorization) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match?.[1] ?? null;
}

/** Equal strings of any length, compared in time that does not depend on where they differ. */
function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

type SignatureCheck = 'ok' | 'absent' | 'malformed' | 'outside' | 'wrong';

function checkSignature(input: ProofInput): SignatureCheck {
  if (input.signature === undefined || input.signature.trim() === '') return 'absent';
  const parsed = parseSignature(input.signature);
  if (!parsed) return 'malformed';
  if (Math.abs(input.nowSeconds - parsed.t) > SIGNATURE_TOLERANCE_S) return 'outside';
  const expected = Buffer.from(signPayload(input.secret, parsed.t, input.body), 'hex');
  // Every entry is compared, so the time taken does not tell which one (if any) matched.
  let matched = false;
  for (const candidate of parsed.v1) matched = timingSafeEqual(Buffer.from(candidate, 'hex'), expected) || matched;
  return matched ? 'ok' : 'wrong';
}

const SIGNATURE_FAILURES: Record<Exclude<SignatureCheck, 'ok' | 'absent'>, string> = {
  malformed: 'the Service-Signature header is malformed (expected t=<unix seconds>,v1=<hex HMAC-SHA256>)',
  outside: `the Service-Signature timestamp is more than ${SIGNATURE_TOLERANCE_S} seconds from the service's clock`,
  wrong: 'the Service-Signature does not match the body signed with the secret',
};

/**
 * A call to a URL with a secret passes with either proof: a valid signature (whatever else `Authorization`
 * carries), or the secret itself as the bearer. A refusal says which proof failed and how.
 */
export function verifyProof(input: ProofInput): ProofResult {
  const signature = checkSignature(input);
  if (signature === 'ok') return { ok: true, via: 'signature' };
  const bearer = bearerOf(input.authorization);
  if (bearer !== null && sameSecret(bearer, input.secret)) return { ok: true, via: 'bearer' };

  if (signature === 'absent' && bearer === null) {
    return {
      ok: false,
      message: 'This secret URL has a secret: send a Service-Signature header (t=<unix seconds>,v1=<hex>) or Authorization: Bearer <whsec_ secret>.',
    };
  }
  const failures: string[] = [];
  if (signature !== 'absent') failures.push(SIGNATURE_FAILURES[signature]);
  if (bearer !== null) failures.push('the bearer secret is wrong');
  const text = failures.join(', and ');
  return { ok: false, message: `No valid proof: ${text}.` };
}

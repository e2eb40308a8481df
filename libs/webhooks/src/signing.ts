import { createHmac, randomBytes } from 'node:crypto';

/** Every signing secret is `whsec_` + base64 of this many random bytes (Standard Webhooks allows 24 to 64). */
export const SIGNING_SECRET_BYTES = 32;
export const SIGNING_SECRET_PREFIX = 'whsec_';

/** After a rotation the previous secret keeps signing beside the new one for this long. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

/**
 * A new secret. One string serves both verifiers: Stripe-style code uses the whole string as the HMAC key,
 * Standard Webhooks libraries base64-decode what follows `whsec_` and use those bytes.
 */
export function newSigningSecret(): string {
  return SIGNING_SECRET_PREFIX + randomBytes(SIGNING_SECRET_BYTES).toString('base64');
}

export function isSigningSecret(value: unknown): value is string {
  return typeof value === 'string' && /^whsec_[A-Za-z0-9+/]{40,88}={0,2}$/.test(value);
}

/** The last four characters, for showing which secret is in use without showing it. */
export function secretHint(secret: string): string {
  return `${SIGNING_SECRET_PREFIX}…${secret.slice(-4)}`;
}

/** `Service-Signature: t=<unix>,v1=<hex>[,v1=<hex>…]`: one `v1` per secret, HMAC-SHA256 keyed by the whole `whsec_` string. */
export function serviceSignature(secrets: readonly string[], timestamp: number, body: string): string {
  const signed = `${timestamp}.${body}`;
  const entries = secrets.map((secret) => `v1=${createHmac('sha256', secret).update(signed, 'utf8').digest('hex')}`);
  return [`t=${timestamp}`, ...entries].join(',');
}

/** The Standard Webhooks key of a secret: the bytes its base64 part encodes. */
export function standardWebhooksKey(secret: string): Buffer {
  const encoded = secret.startsWith(SIGNING_SECRET_PREFIX) ? secret.slice(SIGNING_SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, 'base64');
}

/** `webhook-signature`: space-separated `v1,<base64>` over `<id>.<timestamp>.<body>`, one per secret. */
export function standardWebhooksSignature(secrets: readonly string[], messageId: string, timestamp: number, body: string): string {
  const signed = `${messageId}.${timestamp}.${body}`;
  return secrets.map((secret) => `v1,${createHmac('sha256', standardWebhooksKey(secret)).update(signed, 'utf8').digest('base64')}`).join(' ');
}

/** The `User-Agent` of every attempt. */
export const DELIVERY_USER_AGENT = 'DecisionService-Webhooks/1.0';

/** Names of the headers every attempt carries (lower case, as HTTP/2 and Node write them). */
export const DELIVERY_HEADERS = {
  signature: 'service-signature',
  deliveryId: 'service-delivery-id',
  attempt: 'service-delivery-attempt',
  webhookId: 'webhook-id',
  webhookTimestamp: 'webhook-timestamp',
  webhookSignature: 'webhook-signature',
} as const;

export interface AttemptHeadersInput {
  deliveryId: string;
  /** 1-based number of the attempt within its sequence. */
  attempt: number;
  timestamp: number;
  body: string;
  secrets: readonly string[];
  /** Headers rendered for the destination; ours win over any of the same name. */
  destinationHeaders: Record<string, string>;
  userAgent: string;
}

/** The headers of one attempt: the destination's own, then content type, user agent, ids and both signatures. */
export function attemptHeaders(input: AttemptHeadersInput): Record<string, string> {
  const reserved = new Set<string>([...Object.values(DELIVERY_HEADERS), 'user-agent', 'host', 'content-length', 'transfer-encoding', 'connection']);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.destinationHeaders)) {
    const lower = name.toLowerCase();
    if (!reserved.has(lower)) headers[lower] = value;
  }
  headers['content-type'] ??= 'application/json';
  headers['user-agent'] = input.userAgent;
  headers[DELIVERY_HEADERS.deliveryId] = input.deliveryId;
  headers[DELIVERY_HEADERS.attempt] = String(input.attempt);
  headers[DELIVERY_HEADERS.signature] = serviceSignature(input.secrets, input.timestamp, input.body);
  headers[DELIVERY_HEADERS.webhookId] = input.deliveryId;
  headers[DELIVERY_HEADERS.webhookTimestamp] = String(input.timestamp);
  headers[DELIVERY_HEADERS.webhookSignature] = standardWebhooksSignature(input.secrets, input.deliveryId, input.timestamp, input.body);
  return headers;
}

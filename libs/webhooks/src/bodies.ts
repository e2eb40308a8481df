import { StringDecoder } from 'node:string_decoder';
import type { DeliveryDetailView } from '@ds/contracts';
import { mentionsSecrets } from '@ds/decision-schema';
import { REDACTED } from './redaction';
import { attemptHeaders, DELIVERY_HEADERS, DELIVERY_USER_AGENT } from './signing';

/**
 * What a delivery keeps of a receiver's answer, and what it shows of the request it sent. The body sent is the
 * delivery's own (rendered once by the runner, the same on every attempt); an answer's body is kept per attempt up
 * to RESPONSE_BODY_LIMIT bytes, enough for an error message or a small JSON document, so that a receiver answering
 * megabytes cannot grow the table.
 */
export const RESPONSE_BODY_LIMIT = 8 * 1024;
/** Longest content type kept; a longer header is cut. */
export const CONTENT_TYPE_LIMIT = 200;

export interface KeptResponse {
  contentType: string | null;
  body: string;
  /** The receiver sent more than RESPONSE_BODY_LIMIT bytes, or stopped sending before the attempt's time ran out. */
  truncated: boolean;
}

/**
 * The text kept from a body's first bytes: `read` holds what arrived (it may run past the limit), `complete` says
 * whether the body ended. A character cut in two at the limit is left out whole; NUL, which PostgreSQL's text
 * cannot hold, becomes U+FFFD, as do bytes that are not UTF-8.
 */
export function keptBody(read: Buffer, complete: boolean, limit = RESPONSE_BODY_LIMIT): { body: string; truncated: boolean } {
  const truncated = !complete || read.length > limit;
  const bytes = read.subarray(0, limit);
  // A decoder's write holds back a character whose bytes are not all there; end() would turn them into U+FFFD.
  const decoder = new StringDecoder('utf8');
  const text = truncated ? decoder.write(bytes) : decoder.end(bytes);
  return { body: text.replace(/\0/g, '\uFFFD'), truncated };
}

/** The content type as the receiver sent it, trimmed and bounded; null when it sent none. */
export function keptContentType(header: string | string[] | undefined): string | null {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  return value ? value.slice(0, CONTENT_TYPE_LIMIT) : null;
}

/**
 * The headers a delivery's attempts carry, as the application shows them: the destination's own (a value that
 * refers to a workspace secret shown as REDACTED, whatever else it holds), the content type, the user agent and
 * the delivery's id; both signatures REDACTED. The attempt's number and timestamp change with each attempt and
 * are left out.
 */
export function shownRequestHeaders(input: { deliveryId: string; destinationHeaders: Record<string, string> }): Record<string, string> {
  const destinationHeaders = Object.fromEntries(
    Object.entries(input.destinationHeaders).map(([name, value]) => [name, mentionsSecrets(value) ? REDACTED : value]),
  );
  const headers = attemptHeaders({
    deliveryId: input.deliveryId,
    attempt: 1,
    timestamp: 0,
    body: '',
    secrets: [],
    destinationHeaders,
    userAgent: DELIVERY_USER_AGENT,
  });
  delete headers[DELIVERY_HEADERS.attempt];
  delete headers[DELIVERY_HEADERS.webhookTimestamp];
  headers[DELIVERY_HEADERS.signature] = REDACTED;
  headers[DELIVERY_HEADERS.webhookSignature] = REDACTED;
  return headers;
}

/**
 * One delivery as a caller below Admin sees it: status, timing and sizes, but neither the request's headers and
 * body nor any answer's body and content type. What a receiver answers can hold what the request carried (a
 * receiver echoes; redaction finds the spellings it knows), and the request body can hold customers' data: the
 * roles that manage destinations and secrets read them, the others see that they exist and how big they are.
 * Sizes missing from a reply of an earlier version are counted from the bodies before they are dropped.
 */
export function withheldBodies(view: DeliveryDetailView): DeliveryDetailView {
  return {
    ...view,
    bodies_shown: false,
    request: {
      method: view.request.method,
      headers: null,
      body: null,
      body_bytes: view.request.body_bytes ?? Buffer.byteLength(view.request.body ?? ''),
    },
    attempts: view.attempts.map((attempt) => ({
      ...attempt,
      response: attempt.response && {
        content_type: null,
        body: null,
        body_bytes: attempt.response.body_bytes ?? Buffer.byteLength(attempt.response.body ?? ''),
        truncated: attempt.response.truncated,
      },
    })),
  };
}

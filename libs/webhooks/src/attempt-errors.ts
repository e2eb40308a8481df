/**
 * What a workspace reads about an attempt that did not reach its receiver. Every reason is a fixed sentence: the
 * addresses a name resolved to, the system's error text (`connect ECONNREFUSED 10.0.0.7:443`) and a certificate's
 * complaint (`IP: 10.0.0.7 is not in the cert's list`) would map the service's network for anyone who can create a
 * destination. The detail goes to the service's log.
 */

export const ATTEMPT_ERRORS = {
  addressNotAllowed: "refused: the destination's address is not allowed",
  nameDidNotResolve: 'the name did not resolve',
  connectionRefused: 'the connection was refused',
  connectionReset: 'the connection was closed before an answer',
  unreachable: 'the destination could not be reached',
  tls: "the destination's TLS certificate was not accepted",
  notHttp: 'the answer was not valid HTTP',
  connectionFailed: 'the connection failed',
} as const;

const RESOLUTION = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL', 'ENONAME']);
const RESET = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET']);
const UNREACHABLE = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'ETIMEDOUT', 'EADDRNOTAVAIL']);
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The workspace's sentence for a failed connection, from the system error's code alone. */
export function networkAttemptError(code: string | undefined): string {
  if (code === undefined) return ATTEMPT_ERRORS.connectionFailed;
  if (RESOLUTION.has(code)) return ATTEMPT_ERRORS.nameDidNotResolve;
  if (code === 'ECONNREFUSED') return ATTEMPT_ERRORS.connectionRefused;
  if (RESET.has(code)) return ATTEMPT_ERRORS.connectionReset;
  if (UNREACHABLE.has(code)) return ATTEMPT_ERRORS.unreachable;
  if (TLS_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || code.startsWith('CERT_')) return ATTEMPT_ERRORS.tls;
  if (code.startsWith('HPE_')) return ATTEMPT_ERRORS.notHttp;
  return ATTEMPT_ERRORS.connectionFailed;
}

import { ATTEMPT_ERRORS, networkAttemptError } from './attempt-errors';

describe('attempt errors a workspace reads', () => {
  it.each([
    ['ENOTFOUND', ATTEMPT_ERRORS.nameDidNotResolve],
    ['EAI_AGAIN', ATTEMPT_ERRORS.nameDidNotResolve],
    ['ECONNREFUSED', ATTEMPT_ERRORS.connectionRefused],
    ['ECONNRESET', ATTEMPT_ERRORS.connectionReset],
    ['EHOSTUNREACH', ATTEMPT_ERRORS.unreachable],
    ['ETIMEDOUT', ATTEMPT_ERRORS.unreachable],
    ['ERR_TLS_CERT_ALTNAME_INVALID', ATTEMPT_ERRORS.tls],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', ATTEMPT_ERRORS.tls],
    ['ERR_SSL_WRONG_VERSION_NUMBER', ATTEMPT_ERRORS.tls],
    ['HPE_INVALID_CONSTANT', ATTEMPT_ERRORS.notHttp],
    ['EWHATEVER', ATTEMPT_ERRORS.connectionFailed],
    [undefined, ATTEMPT_ERRORS.connectionFailed],
  ])('reads %s as a fixed sentence', (code, sentence) => {
    expect(networkAttemptError(code)).toBe(sentence);
  });

  it('never carries an address, a name or a code', () => {
    for (const sentence of Object.values(ATTEMPT_ERRORS)) {
      expect(sentence).not.toMatch(/\d+\.\d+|::|\bE[A-Z_]{4,}|localhost/);
    }
  });
});

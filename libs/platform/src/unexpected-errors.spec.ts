import { ServiceError } from '@ds/contracts';
import { Logger } from './logger';
import { answerForUnexpected, internalError } from './unexpected-errors';

function recordingLogger() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
  const record = (level: string) => (fields: Record<string, unknown>, message: string) => lines.push({ level, fields, message });
  return { logger: { warn: record('warn'), error: record('error') } as unknown as Logger, lines };
}

describe('answerForUnexpected', () => {
  it('answers an unreachable dependency 503 SERVICE_UNAVAILABLE, with a warning', () => {
    const { logger, lines } = recordingLogger();
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const answer = answerForUnexpected(refused, logger, 'handling failed', { subject: 'v1.x' });
    expect(answer).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    expect(lines).toEqual([{ level: 'warn', fields: { err: refused, subject: 'v1.x' }, message: 'a dependency is unreachable; answered 503' }]);
  });

  it('answers anything else 500 INTERNAL_ERROR with the fixed message, logging the cause as the failure', () => {
    const { logger, lines } = recordingLogger();
    const bug = new TypeError("Cannot read properties of undefined (reading 'id')");
    const answer = answerForUnexpected(bug, logger, 'handling failed');
    expect(answer).toMatchObject({ code: 'INTERNAL_ERROR', status: 500, message: internalError().message });
    expect(answer.message).not.toContain('Cannot read');
    expect(lines).toEqual([{ level: 'error', fields: { err: bug }, message: 'handling failed' }]);
  });

  it('passes a ServiceError as it is, without a log line', () => {
    const { logger, lines } = recordingLogger();
    const verdict = new ServiceError('NOT_FOUND', 'No such thing.');
    expect(answerForUnexpected(verdict, logger, 'handling failed')).toBe(verdict);
    expect(lines).toEqual([]);
  });

  it('passes a refusal of more issues than an error lists as it is, with a warning that counts them, never an error', () => {
    const { logger, lines } = recordingLogger();
    const issues = Array.from({ length: 14_000 }, (_, i) => ({ path: `answers.k${i}`, message: 'is not a question' }));
    const refusal = new ServiceError('INVALID_REQUEST', 'The outcome does not fit.', issues);
    expect(answerForUnexpected(refusal, logger, 'handling failed', { subject: 'v1.x' })).toBe(refusal);
    expect(lines).toEqual([
      {
        level: 'warn',
        fields: { subject: 'v1.x', code: 'INVALID_REQUEST', status: 400, issues: 14_000 },
        message: 'refused a request with more issues than an error lists',
      },
    ]);
  });
});

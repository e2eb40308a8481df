import { Writable } from 'node:stream';
import { createLogger, serializeRequest } from './logger';

/** A real pino logger writing JSON lines into memory. */
function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger('test', 'trace', stream);
  /** The first line logged, parsed; a test that logged nothing fails here rather than on an undefined entry. */
  const first = () => {
    const [line] = lines;
    if (line === undefined) throw new Error('nothing was logged');
    return JSON.parse(line) as Record<string, unknown>;
  };
  return { logger, text: () => lines.join('\n'), first };
}

describe('log lines never carry state, credentials or statement values', () => {
  it('redacts sensitive fields at the top level and one object down', () => {
    const { logger, text, first } = capture();
    logger.info(
      {
        state: { message: 'customer secret text' },
        apiKey: 'svc_live_abcdef',
        user: { email: 'a@example.com', password_hash: 'scrypt$deadbeef', password: 'hunter22' },
        request: { authorization: 'Bearer tok_xyz', token: 'sess_123' },
        workspaceId: 'ws_1',
      },
      'something happened',
    );
    const output = text();
    for (const secret of ['customer secret text', 'svc_live_abcdef', 'scrypt$deadbeef', 'hunter22', 'tok_xyz', 'sess_123'])
      expect(output).not.toContain(secret);
    const entry = first();
    expect(entry.state).toBe('[redacted]');
    expect(entry.workspaceId).toBe('ws_1');
    expect((entry.user as Record<string, unknown>).email).toBe('a@example.com');
  });

  it('drops the statement, parameters and detail of a driver error, keeping what identifies it', () => {
    const { logger, text, first } = capture();
    const driverError = Object.assign(new Error('duplicate key value violates unique constraint "users_email_key"'), {
      code: '23505',
      constraint: 'users_email_key',
      table: 'users',
      detail: 'Key (email)=(victim@example.com) already exists.',
    });
    const queryFailed = Object.assign(new Error(driverError.message), {
      name: 'QueryFailedError',
      query: "INSERT INTO users (email, password_hash) VALUES ('victim@example.com', $1)",
      parameters: ['scrypt$secrethash'],
      driverError,
      code: '23505',
      detail: driverError.detail,
      cause: driverError,
    });
    logger.error({ err: queryFailed }, 'insert failed');
    const output = text();
    expect(output).not.toContain('victim@example.com');
    expect(output).not.toContain('scrypt$secrethash');
    const err = first().err as Record<string, unknown>;
    expect(err.code).toBe('23505');
    expect((err.driverError as Record<string, unknown>).constraint).toBe('users_email_key');
    expect(err.message).toContain('users_email_key');
  });

  it('replaces the message of a data exception, which quotes the offending value', () => {
    const { logger, text, first } = capture();
    const error = Object.assign(new Error('invalid input syntax for type integer: "svc_live_leaked"'), { code: '22P02' });
    logger.error({ err: error }, 'query failed');
    expect(text()).not.toContain('svc_live_leaked');
    expect((first().err as Record<string, unknown>).message).toBe('database data exception 22P02');
  });

  it('logs a request by its path, never its query string', () => {
    const { logger, text } = capture();
    logger.info({ req: { id: 'req_1', method: 'GET', url: '/app/v1/launch?token=sess_secret&state=x' } }, 'request');
    expect(text()).toContain('/app/v1/launch');
    expect(text()).not.toContain('sess_secret');
    expect(serializeRequest({ method: 'POST', url: '/v1/decisions/a' })).toEqual({ id: undefined, method: 'POST', path: '/v1/decisions/a' });
  });
});

import { ServiceError } from '@ds/contracts';
import { executionQuery } from './public.controller';

function refusal(query: Record<string, unknown>): { code: string; details: unknown } {
  try {
    executionQuery(query);
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    return { code: (error as ServiceError).code, details: (error as ServiceError).details };
  }
  throw new Error('accepted');
}

describe('executions list query', () => {
  it('lists every source by default on the public API and what the caller gives as default elsewhere', () => {
    expect(executionQuery({}).sources).toBeNull();
    expect(executionQuery({}, ['live']).sources).toEqual(['live']);
    expect(executionQuery({ source: 'all' }, ['live']).sources).toBeNull();
  });

  it('takes source groups comma-separated or repeated, in one order', () => {
    expect(executionQuery({ source: 'shadow,live' }).sources).toEqual(['live', 'shadow']);
    expect(executionQuery({ source: ['replay', 'test'] }).sources).toEqual(['test', 'replay']);
  });

  it('reads version, action, reason, error code and the count', () => {
    const query = executionQuery({ version: '12', action: 'block', reason: 'policy', error_code: 'INVALID_STATE', include: 'total_count,trace' });
    expect(query).toMatchObject({ version: 12, action: 'block', reason: 'policy', errorCode: 'INVALID_STATE', includeTotal: true, includeTrace: true });
    expect(executionQuery({})).toMatchObject({ version: null, action: null, reason: null, errorCode: null, includeTotal: false });
  });

  it.each([
    [{ source: 'replays' }, 'source'],
    [{ source: '' }, 'source'],
    [{ source: 'live,' }, 'source'],
    [{ version: '01' }, 'version'],
    [{ version: '0' }, 'version'],
    [{ version: '2147483648' }, 'version'],
    [{ version: ['1', '2'] }, 'version'],
    [{ action: 'stop' }, 'action'],
    [{ action: ['block', 'block'] }, 'action'],
    [{ reason: 'rule' }, 'reason'],
    [{ error_code: 'invalid_state' }, 'error_code'],
  ])('refuses %j with 400 INVALID_REQUEST naming %s', (query, path) => {
    const { code, details } = refusal(query);
    expect(code).toBe('INVALID_REQUEST');
    expect(details).toEqual([expect.objectContaining({ path })]);
  });

  it('names every bad parameter at once', () => {
    const { details } = refusal({ source: 'x', status: 'ok', limit: '0' });
    expect((details as Array<{ path: string }>).map((issue) => issue.path).sort()).toEqual(['limit', 'source', 'status']);
  });
});

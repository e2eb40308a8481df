import { isDependencyUnavailable } from './unavailable';

describe('isDependencyUnavailable', () => {
  it('recognises a database or connection that is away, also inside a wrapping error', () => {
    const starting = Object.assign(new Error('the database system is starting up'), { code: '57P03' });
    expect(isDependencyUnavailable(starting)).toBe(true);
    expect(isDependencyUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', errno: -111 }))).toBe(true);
    expect(isDependencyUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDependencyUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isDependencyUnavailable(Object.assign(new Error('query failed'), { driverError: starting }))).toBe(true);
    expect(isDependencyUnavailable(new Error('outer', { cause: Object.assign(new Error('x'), { code: '57P01' }) }))).toBe(true);
  });

  it('leaves real failures alone', () => {
    expect(isDependencyUnavailable(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe(false);
    expect(isDependencyUnavailable(Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }))).toBe(false);
    expect(isDependencyUnavailable(Object.assign(new Error('syntax error'), { code: '42601' }))).toBe(false);
    expect(isDependencyUnavailable(null)).toBe(false);
    expect(isDependencyUnavailable('ECONNREFUSED')).toBe(false);
  });
});

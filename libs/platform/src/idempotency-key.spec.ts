import { ServiceError } from '@ds/contracts';
import { parseIdempotencyKey } from './idempotency-key';

describe('parseIdempotencyKey', () => {
  it('passes an absent header and a key of 1 to 128 allowed characters', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey('a')).toBe('a');
    expect(parseIdempotencyKey('order-1.retry_2:A')).toBe('order-1.retry_2:A');
    expect(parseIdempotencyKey('k'.repeat(128))).toBe('k'.repeat(128));
  });

  it.each(['', 'k'.repeat(129), 'has space', 'slash/ed', 'ünicode', 'a,b'])('refuses %j with 400 INVALID_REQUEST naming the header', (header) => {
    let refusal: unknown;
    try {
      parseIdempotencyKey(header);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ServiceError);
    expect((refusal as ServiceError).toWire()).toEqual({
      code: 'INVALID_REQUEST',
      status: 400,
      message: 'Idempotency-Key must be 1 to 128 characters from A-Za-z0-9._:-.',
      details: [{ path: 'Idempotency-Key', message: 'invalid format' }],
    });
  });
});

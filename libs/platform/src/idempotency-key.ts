import { ServiceError } from '@ds/contracts';
import { isValidCallerToken } from '@ds/ids';

/**
 * The `Idempotency-Key` header as the spec allows it: absent (undefined), or 1 to 128 characters from
 * `A-Za-z0-9._:-`. Anything else is the caller's mistake, 400 INVALID_REQUEST naming the header.
 */
export function parseIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined || isValidCallerToken(header)) return header;
  throw new ServiceError('INVALID_REQUEST', 'Idempotency-Key must be 1 to 128 characters from A-Za-z0-9._:-.', [
    { path: 'Idempotency-Key', message: 'invalid format' },
  ]);
}

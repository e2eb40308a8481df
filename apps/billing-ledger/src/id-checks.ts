import { ServiceError } from '@ds/contracts';
import { isValidCallerToken } from '@ds/ids';

/** Ids that reach the ledger become parts of entry ids: the caller-token alphabet keeps them unambiguous. */
export function checkIds(ids: Record<string, unknown>): void {
  const issues = Object.entries(ids)
    .filter(([, value]) => !isValidCallerToken(value))
    .map(([path]) => ({ path, message: 'must be 1 to 128 characters from A-Za-z0-9._:-' }));
  if (issues.length > 0) throw new ServiceError('INVALID_REQUEST', 'The billing request is not valid.', issues);
}

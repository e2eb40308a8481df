import { DECISION_VERSION_PATTERN, MAX_DECISION_VERSION, ServiceError } from '@ds/contracts';

/**
 * The `Decision-Version` header of the run endpoint: absent (null, the active version runs) or one positive
 * integer. Anything else, a repeated header included, is the caller's mistake: 400 INVALID_REQUEST naming it,
 * checked with the body at step 3. Whether the decision has that version is the runner's question (step 5).
 */
export function parseDecisionVersion(header: string | string[] | undefined): number | null {
  if (header === undefined) return null;
  const text = typeof header === 'string' ? header.trim() : null;
  const version = text !== null && DECISION_VERSION_PATTERN.test(text) ? Number(text) : NaN;
  if (version >= 1 && version <= MAX_DECISION_VERSION) return version;
  throw new ServiceError('INVALID_REQUEST', `Decision-Version must be a version number, an integer from 1 to ${MAX_DECISION_VERSION}.`, [
    { path: 'Decision-Version', message: 'must be a positive integer' },
  ]);
}

import { ServiceError } from '@ds/contracts';
import { parseVersionText, VERSION_NUMBER_MAX } from '@ds/decision-schema';

/**
 * The `Decision-Version` header of the run endpoint: absent (null, the active version runs) or one positive
 * integer, in the canonical digits every route reads a version in. Anything else, a repeated header included, is the
 * caller's mistake: 400 INVALID_REQUEST naming it, checked with the body at step 3. Whether the decision has that
 * version is the runner's question (step 5).
 */
export function parseDecisionVersion(header: string | string[] | undefined): number | null {
  if (header === undefined) return null;
  // Whitespace around a header's value is not part of it (RFC 9110, 5.5); inside, the digits are read as anywhere else.
  const parsed = parseVersionText(typeof header === 'string' ? header.trim() : header, 'Decision-Version');
  if (parsed.ok) return parsed.value;
  throw new ServiceError('INVALID_REQUEST', `Decision-Version must be a version number, an integer from 1 to ${VERSION_NUMBER_MAX}.`, [parsed.issue]);
}

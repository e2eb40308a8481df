import { ServiceError } from './errors';

/** Longest deploy note kept with a version: a sentence or two on why, not a changelog. */
export const DEPLOY_NOTE_MAX_LENGTH = 500;

/**
 * The note of a deploy request's body. Deploys sent without a body (older callers) or without `note` have none;
 * blank text is no note. Anything but text up to DEPLOY_NOTE_MAX_LENGTH characters is a 400.
 */
export function deployNote(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  if (typeof body !== 'object' || Array.isArray(body)) throw new ServiceError('INVALID_REQUEST', 'The request body must be a JSON object.');
  const note = (body as Record<string, unknown>).note;
  if (note === undefined || note === null) return null;
  if (typeof note !== 'string') throw invalid('must be text');
  const trimmed = note.trim();
  // Characters as people count them, so an emoji is one.
  if ([...trimmed].length > DEPLOY_NOTE_MAX_LENGTH) throw invalid(`must be at most ${DEPLOY_NOTE_MAX_LENGTH} characters`);
  return trimmed === '' ? null : trimmed;
}

function invalid(message: string): ServiceError {
  return new ServiceError('INVALID_REQUEST', `note ${message}.`, [{ path: 'note', message }]);
}

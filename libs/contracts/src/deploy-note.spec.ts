import { DEPLOY_NOTE_MAX_LENGTH, deployNote } from './deploy-note';
import { ServiceError } from './errors';

function refusal(body: unknown): { code: string; path: string | undefined } {
  try {
    deployNote(body);
  } catch (error) {
    if (error instanceof ServiceError) return { code: error.code, path: (error.details as Array<{ path: string }> | undefined)?.[0]?.path };
    throw error;
  }
  throw new Error('accepted');
}

describe('deploy note', () => {
  it('is absent without a body, without a note, or with blank text', () => {
    expect(deployNote(undefined)).toBeNull();
    expect(deployNote(null)).toBeNull();
    expect(deployNote({})).toBeNull();
    expect(deployNote({ note: null })).toBeNull();
    expect(deployNote({ note: '   \n' })).toBeNull();
  });

  it('is kept trimmed, up to the limit counted in characters', () => {
    expect(deployNote({ note: '  Adds the refund question. ' })).toBe('Adds the refund question.');
    expect(deployNote({ note: '🚀'.repeat(DEPLOY_NOTE_MAX_LENGTH) })).toBe('🚀'.repeat(DEPLOY_NOTE_MAX_LENGTH));
  });

  it('refuses a note that is not text or is too long, and a body that is not an object', () => {
    expect(refusal({ note: 42 })).toEqual({ code: 'INVALID_REQUEST', path: 'note' });
    expect(refusal({ note: ['a'] })).toEqual({ code: 'INVALID_REQUEST', path: 'note' });
    expect(refusal({ note: 'x'.repeat(DEPLOY_NOTE_MAX_LENGTH + 1) })).toEqual({ code: 'INVALID_REQUEST', path: 'note' });
    expect(refusal('note')).toEqual({ code: 'INVALID_REQUEST', path: undefined });
    expect(refusal([{ note: 'a' }])).toEqual({ code: 'INVALID_REQUEST', path: undefined });
  });
});

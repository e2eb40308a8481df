import { draftToRestore, HEARTBEAT_MS, LocalDraft } from './drafts';

const draft = (tab: string, at: number): LocalDraft => ({ doc: { a: 1 }, base: {}, revision: 2, at: new Date(at).toISOString(), tab });

describe('draftToRestore', () => {
  const now = Date.parse('2026-01-01T12:00:00Z');
  it('gives a tab back its own unsaved edits after a reload, however recent', () => {
    expect(draftToRestore(draft('me', now - 100), 'me', now)).not.toBeNull();
  });
  it('leaves another tab’s edits alone while that tab still writes them', () => {
    expect(draftToRestore(draft('other', now - HEARTBEAT_MS), 'me', now)).toBeNull();
  });
  it('takes up the edits of a tab that stopped writing (closed or crashed)', () => {
    expect(draftToRestore(draft('other', now - 3 * HEARTBEAT_MS), 'me', now)?.revision).toBe(2);
  });
  it('has nothing to restore when nothing was kept', () => {
    expect(draftToRestore(null, 'me', now)).toBeNull();
  });
});

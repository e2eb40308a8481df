import { Conflict, EditorAction, editorReducer, EditorState, initialEditorState } from './editor-state';

const saved = { name: 'draft', questions: [] as unknown[] };
const run = (state: EditorState, ...actions: EditorAction[]) => actions.reduce(editorReducer, state);
const opened = () => initialEditorState(saved, saved, 4, null);

describe('the editor state', () => {
  it('opens on the saved draft, its text, the form and nothing pending', () => {
    const state = opened();
    expect(state).toMatchObject({
      base: saved,
      revision: 4,
      restoredAt: null,
      text: JSON.stringify(saved, null, 2),
      view: 'form',
      busy: false,
      showAll: false,
    });
    expect(state.history.present).toBe(saved);
    // Restored edits open as the document, measured against the draft they were made on.
    const restored = initialEditorState({ name: 'mine' }, saved, 3, '2026-01-01T00:00:00.000Z');
    expect(restored).toMatchObject({ base: saved, revision: 3, restoredAt: '2026-01-01T00:00:00.000Z', text: JSON.stringify({ name: 'mine' }, null, 2) });
  });

  it('records a form edit with the text following it, folds typing into one field, and remembers the path as touched', () => {
    const typed = run(
      { ...opened(), notice: 'Saved' },
      { type: 'edit', doc: { ...saved, name: 'd' }, path: 'name', at: 0 },
      { type: 'edit', doc: { ...saved, name: 'dr' }, path: 'name', at: 200 },
    );
    expect(typed.history.present).toEqual({ ...saved, name: 'dr' });
    expect(typed.text).toBe(JSON.stringify({ ...saved, name: 'dr' }, null, 2));
    expect(typed.notice).toBeNull();
    expect([...typed.touched]).toEqual(['name']);
    expect(run(typed, { type: 'undo' }).history.present).toBe(saved);

    const added = run(
      opened(),
      { type: 'edit', doc: { ...saved, questions: [{}] }, path: 'questions.0', added: true, at: 0 },
      { type: 'markFresh', path: 'policies.0' },
    );
    expect([...added.fresh]).toEqual(['questions.0', 'policies.0']);
    expect([...added.touched]).toEqual([]);
  });

  it('takes JSON text that parses as the document and keeps text that does not, with the parser’s message', () => {
    const broken = run(opened(), { type: 'typeJson', text: '{"name": ', at: 0 });
    expect(broken.text).toBe('{"name": ');
    expect(broken.jsonError).toEqual(expect.any(String));
    expect(broken.history.present).toBe(saved);
    const fixed = run(broken, { type: 'typeJson', text: '{"name": "json"}', at: 10 });
    expect(fixed).toMatchObject({ jsonError: null, text: '{"name": "json"}' });
    expect(fixed.history.present).toEqual({ name: 'json' });
    // Undo leaves the typed text for the document's own.
    const undone = run(fixed, { type: 'undo' });
    expect(undone).toMatchObject({ text: JSON.stringify(saved, null, 2), jsonError: null });
  });

  it('leaves the state as it is when there is nothing to undo or redo', () => {
    const state = opened();
    expect(run(state, { type: 'undo' })).toBe(state);
    expect(run(state, { type: 'redo' })).toBe(state);
  });

  it('goes through a save: busy, then the sent document as the new base at its revision, the restore note gone', () => {
    const edited = run({ ...initialEditorState({ name: 'mine' }, saved, 3, '2026-01-01T00:00:00.000Z'), error: new Error('before') }, { type: 'saving' });
    expect(edited).toMatchObject({ busy: true, error: null });
    const done = run(edited, { type: 'saved', doc: { name: 'mine' }, revision: 5, notice: 'Saved as revision 5' });
    expect(done).toMatchObject({ busy: false, base: { name: 'mine' }, revision: 5, restoredAt: null, notice: 'Saved as revision 5', conflict: null });
    expect(run(edited, { type: 'failed', error: 'offline' })).toMatchObject({ busy: false, error: 'offline' });
    expect(run(opened(), { type: 'showIssues' })).toMatchObject({ showAll: true, notice: null });
  });

  it('merges a conflict into one undo step on their revision, or adopts their draft', () => {
    const theirs = { draft: { name: 'theirs' }, revision: 9 };
    const conflict: Conflict = { revision: 9, theirs, merged: { name: 'merged' }, both: [], theirChanges: [], myChanges: [] };
    const met = run(opened(), { type: 'saving' }, { type: 'conflict', conflict });
    expect(met).toMatchObject({ busy: false, conflict });
    const merged = run(met, { type: 'merge', notice: 'Merged', at: 0 });
    expect(merged).toMatchObject({ base: theirs.draft, revision: 9, conflict: null, notice: 'Merged' });
    expect(merged.history.present).toEqual({ name: 'merged' });
    expect(run(merged, { type: 'undo' }).history.present).toBe(saved);
    const adopted = run(met, { type: 'adopt', draft: theirs.draft, revision: 9, at: 0 });
    expect(adopted).toMatchObject({ base: theirs.draft, revision: 9, conflict: null, text: JSON.stringify(theirs.draft, null, 2) });
    // Merging with no conflict open changes nothing.
    expect(run(opened(), { type: 'merge', notice: 'Merged', at: 0 })).toEqual(opened());
  });

  it('discards unsaved edits back to the saved draft as a step that can be undone, closing the question', () => {
    const edited = run({ ...initialEditorState({ name: 'mine' }, saved, 3, '2026-01-01T00:00:00.000Z'), discarding: true }, { type: 'discard', at: 0 });
    expect(edited).toMatchObject({ restoredAt: null, discarding: false, text: JSON.stringify(saved, null, 2) });
    expect(edited.history.present).toBe(saved);
    expect(run(edited, { type: 'undo' }).history.present).toEqual({ name: 'mine' });
  });

  it('opens and closes the dialogs and switches views', () => {
    const proceed = () => undefined;
    const confirmation = { title: 'Remove?', body: 'Gone for good', confirmLabel: 'Remove', run: proceed };
    expect(run(opened(), { type: 'ask', confirmation }).asking).toBe(confirmation);
    expect(run(opened(), { type: 'ask', confirmation }, { type: 'ask', confirmation: null }).asking).toBeNull();
    expect(run(opened(), { type: 'leaving', proceed }).leaving).toBe(proceed);
    expect(run(opened(), { type: 'discarding', open: true }).discarding).toBe(true);
    expect(run(opened(), { type: 'view', view: 'json' }).view).toBe('json');
  });
});

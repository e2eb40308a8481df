import { ReactNode, useCallback, useContext, useEffect, useMemo, useReducer, useRef } from 'react';
import { Change, jsonDiff, limits, renameReferences, SchemaIssue, STATE_FIELD_TYPES, validateSchema } from '@ds/decision-schema';
import { api, ApiError, DecisionDetails } from '../lib/api';
import { fieldId, issuesAt, setIn } from '../lib/issues';
import { draftToRestore, dropLocalDraft, HEARTBEAT_MS, keepLocalDraft, readLocalDraft, sameJson, thisTab } from '../lib/drafts';
import { Conflict, editorReducer, initialEditorState } from '../lib/editor-state';
import { threeWayMerge } from '../lib/merge';
import { moveItem } from '../lib/lists';
import { describePath } from '../lib/wording';
import { guardNavigation } from '../router';
import { may, useApp } from '../context';
import { ConfirmButton, ConfirmDialog, Dialog, ErrorBox, formatDate } from '../ui';
import { CompositesEditor } from '../editors/composites';
import { DestinationsEditor } from '../editors/destinations';
import { PoliciesEditor } from '../editors/policies';
import { ReviewSettingsEditor } from '../editors/review-settings';
import { CheckField, describedBy, EditorContext, fieldBinding, FieldIssues, NumberField, SelectField, TextField, Update } from '../editors/fields';
import { ItemControls } from '../editors/parts';
import { SortableList } from '../editors/sortable';
import { lazyScreen, ScreenSlot } from '../components/lazy-screen';

/** CodeMirror comes only with the JSON view, the first time it is opened. */
const JsonView = lazyScreen(() => import('../editors/json-view'), 'JsonView');

type Json = any;

function getIn(root: unknown, path: Array<string | number>): unknown {
  let node: any = root;
  for (const part of path) node = node === null || typeof node !== 'object' ? undefined : node[part];
  return node;
}

/**
 * The schema as a form and as JSON, one document behind both: the form writes into it and the JSON text is
 * re-rendered; JSON text that parses replaces it. The service's own validator runs on every change. Unsaved edits
 * are kept in this browser until saved or discarded, leaving asks first, and a save that meets someone else's is
 * merged where the two touch different places.
 */
export function Editor({ decision, onSaved }: { decision: DecisionDetails; onSaved: (decision: DecisionDetails) => void }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const editable = may(workspace, 'decisions:write');
  const [state, dispatch] = useReducer(editorReducer, null, () => {
    // Unsaved edits kept in this browser open where they were left, unless the saved draft already holds them.
    const stored = editable ? draftToRestore(readLocalDraft(ws, decision.id), thisTab(), Date.now()) : null;
    return stored && !sameJson(stored.doc, decision.draft)
      ? initialEditorState(stored.doc, stored.base, stored.revision, stored.at)
      : initialEditorState(decision.draft, decision.draft, decision.revision, null);
  });
  const { history, base, revision, restoredAt, text, jsonError, view, conflict, error, notice, busy, touched, fresh, showAll, asking, leaving, discarding } =
    state;
  const doc = history.present;

  const dirty = jsonError !== null || !sameJson(doc, base);

  const result = useMemo(() => validateSchema(doc), [doc]);
  const issues: SchemaIssue[] = useMemo(() => (result.valid ? [] : result.issues), [result]);
  const shownIssues = useMemo(
    () =>
      showAll
        ? issues
        : issues.filter((issue) => ![...fresh].some((prefix) => within(issue.path, prefix)) || [...touched].some((path) => within(path, issue.path))),
    [issues, showAll, fresh, touched],
  );
  const httpHooks = useMemo(() => plainHttpDestinations(doc), [doc]);

  // Unsaved edits survive a reload or a closed tab: kept here until saved or discarded, written again while
  // this tab lives so that another tab knows they are still being edited.
  useEffect(() => {
    if (!editable) return;
    if (sameJson(doc, base)) {
      const stored = readLocalDraft(ws, decision.id);
      if (stored?.tab === thisTab()) dropLocalDraft(ws, decision.id);
      return;
    }
    const keep = () => keepLocalDraft(ws, decision.id, { doc, base, revision, at: new Date().toISOString(), tab: thisTab() });
    keep();
    const beat = setInterval(keep, HEARTBEAT_MS);
    return () => clearInterval(beat);
  }, [doc, base, revision, ws, decision.id, editable]);

  useEffect(() => {
    if (!dirty || !editable) return;
    const warn = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      event.returnValue = '';
    };
    window.addEventListener('beforeunload', warn);
    const release = guardNavigation((proceed) => dispatch({ type: 'leaving', proceed }));
    return () => {
      window.removeEventListener('beforeunload', warn);
      release();
    };
  }, [dirty, editable]);

  const update: Update = (path, value, rewrite) => {
    const added = getIn(doc, path) === undefined && value !== null && typeof value === 'object';
    const next = setIn(doc, path, value);
    dispatch({ type: 'edit', doc: rewrite ? rewrite(next) : next, path: path.join('.'), added, at: Date.now() });
  };

  const editText = (value: string) => dispatch({ type: 'typeJson', text: value, at: Date.now() });

  const adopt = (theirs: DecisionDetails) => {
    dispatch({ type: 'adopt', draft: theirs.draft, revision: theirs.revision, at: Date.now() });
    onSaved(theirs);
  };

  const save = async (baseRevision: number): Promise<boolean> => {
    if (issues.length > 0 || jsonError !== null) {
      dispatch({ type: 'showIssues' });
      document.getElementById('editor-issues')?.focus();
      return false;
    }
    dispatch({ type: 'saving' });
    try {
      const reply = await api<{ revision: number }>('PUT', `/workspaces/${ws}/decisions/${decision.id}/draft`, { schema: doc, revision: baseRevision });
      dispatch({ type: 'saved', doc, revision: reply.revision, notice: t('ed.saved', { revision: reply.revision }) });
      dropLocalDraft(ws, decision.id);
      onSaved({ ...decision, draft: doc, revision: reply.revision });
      return true;
    } catch (failure) {
      if (failure instanceof ApiError && failure.code === 'CONFLICT') {
        try {
          const current = await api<DecisionDetails>('GET', `/workspaces/${ws}/decisions/${decision.id}`);
          const { merged, conflicts } = threeWayMerge(base, doc, current.draft);
          const conflict: Conflict = {
            revision: current.revision,
            theirs: current,
            merged,
            both: conflicts,
            theirChanges: jsonDiff(base, current.draft),
            myChanges: jsonDiff(base, doc),
          };
          dispatch({ type: 'conflict', conflict });
        } catch (reading) {
          dispatch({ type: 'failed', error: reading });
        }
      } else {
        dispatch({ type: 'failed', error: failure });
      }
      return false;
    }
  };

  const showForm = () => dispatch({ type: 'view', view: 'form' });

  // Ctrl/Cmd+S saves, Ctrl/Cmd+Z undoes, Ctrl/Cmd+Shift+Z or Ctrl+Y redoes, wherever the focus is on the page.
  const keys = useRef<(event: KeyboardEvent) => void>(() => undefined);
  keys.current = (event) => {
    if (!(event.ctrlKey || event.metaKey) || event.altKey || !editable) return;
    const key = event.key.toLowerCase();
    if (key === 's') {
      event.preventDefault();
      if (!busy && conflict === null) void save(revision);
    } else if ((key === 'z' || key === 'y') && !(event.target as Element | null)?.closest?.('.cm-editor')) {
      event.preventDefault();
      dispatch({ type: key === 'y' || event.shiftKey ? 'redo' : 'undo' });
    }
  };
  useEffect(() => {
    const listener = (event: KeyboardEvent) => keys.current(event);
    window.addEventListener('keydown', listener);
    return () => window.removeEventListener('keydown', listener);
  }, []);

  const questions: Json[] = Array.isArray(doc?.questions) ? doc.questions : [];
  const barHeight = useStickyBarHeight();
  return (
    <EditorContext.Provider
      value={{ ask: (confirmation) => dispatch({ type: 'ask', confirmation }), markFresh: (path) => dispatch({ type: 'markFresh', path }) }}
    >
      <div className="editor">
        <div className="editor-bar" role="region" aria-label={t('ed.save')} ref={barHeight}>
          <div role="group" aria-label={t('ed.view')} className="segmented">
            <button type="button" aria-pressed={view === 'form'} onClick={() => dispatch({ type: 'view', view: 'form' })}>
              {t('ed.form')}
            </button>
            <button type="button" aria-pressed={view === 'json'} onClick={() => dispatch({ type: 'view', view: 'json' })}>
              {t('ed.json')}
            </button>
          </div>
          {editable && (
            <div className="actions">
              <button type="button" onClick={() => dispatch({ type: 'undo' })} disabled={history.past.length === 0} aria-keyshortcuts="Control+Z Meta+Z">
                {t('ed.undo')}
              </button>
              <button
                type="button"
                onClick={() => dispatch({ type: 'redo' })}
                disabled={history.future.length === 0}
                aria-keyshortcuts="Control+Shift+Z Meta+Shift+Z Control+Y"
              >
                {t('ed.redo')}
              </button>
              <button type="button" onClick={() => dispatch({ type: 'discarding', open: true })} disabled={!dirty}>
                {t('ed.discard')}
              </button>
              <button
                type="button"
                className="primary"
                disabled={busy || conflict !== null || !dirty}
                onClick={() => void save(revision)}
                aria-keyshortcuts="Control+S Meta+S"
              >
                {t('ed.save')}
              </button>
            </div>
          )}
          <span className={dirty ? 'save-state unsaved' : 'save-state'} role="status" data-testid="save-state">
            {dirty ? t('ed.unsavedLong') : t('ed.allSaved')} · {t('ed.revision', { revision })}
          </span>
        </div>
        {!editable && <p className="notice">{t(workspace?.permissions ? 'ed.readOnlyEmbed' : 'ed.readOnly')}</p>}
        {editable && <p className="muted small">{t('ed.shortcuts')}</p>}
        {restoredAt && (
          <p className="notice" role="status">
            {t('ed.restored', { when: formatDate(restoredAt) })}
          </p>
        )}
        {notice && (
          <p className="notice" role="status">
            {notice}
          </p>
        )}
        {conflict && (
          <ConflictPanel
            conflict={conflict}
            doc={doc}
            busy={busy}
            onMerge={() => dispatch({ type: 'merge', notice: t('ed.conflict.merged'), at: Date.now() })}
            onLoadTheirs={() => adopt(conflict.theirs)}
            onOverwrite={() => void save(conflict.revision)}
          />
        )}
        {error !== null && <ErrorBox error={error} />}
        <IssueList issues={shownIssues} hidden={issues.length - shownIssues.length} jsonError={jsonError} doc={doc} onShow={showForm} />
        {httpHooks.length > 0 && (
          <ul className="issues warn" aria-label={t('ed.destinations')}>
            {httpHooks.map((index) => (
              <li key={index}>
                <FocusLink path={`destinations.${index}.url`} onShow={showForm}>
                  {describePath(`destinations.${index}.url`, doc, t)}
                </FocusLink>{' '}
                {t('ed.webhookHttps')}
              </li>
            ))}
          </ul>
        )}
        <div className={view === 'form' ? 'editor-layout' : undefined}>
          {view === 'form' && !jsonError && <Outline questions={questions} />}
          <fieldset disabled={!editable} className="plain">
            <legend className="visually-hidden">{decision.name}</legend>
            {view === 'json' ? (
              <ScreenSlot>
                <JsonView text={text} onChange={editText} issues={shownIssues} doc={doc} readOnly={!editable} />
              </ScreenSlot>
            ) : jsonError ? (
              <p className="issue">{t('ed.jsonError', { message: jsonError })}</p>
            ) : (
              <SchemaForm doc={doc} issues={shownIssues} update={update} />
            )}
          </fieldset>
        </div>
      </div>
      {asking && (
        <ConfirmDialog
          title={asking.title}
          confirmLabel={asking.confirmLabel}
          danger
          onCancel={() => dispatch({ type: 'ask', confirmation: null })}
          onConfirm={() => {
            asking.run();
            dispatch({ type: 'ask', confirmation: null });
          }}
        >
          <p>{asking.body}</p>
        </ConfirmDialog>
      )}
      {discarding && (
        <ConfirmDialog
          title={t('ed.discardQuestion')}
          confirmLabel={t('ed.discard')}
          danger
          onCancel={() => dispatch({ type: 'discarding', open: false })}
          onConfirm={() => dispatch({ type: 'discard', at: Date.now() })}
        >
          <p>{t('ed.discardBody', { revision })}</p>
        </ConfirmDialog>
      )}
      {leaving && (
        <Dialog
          title={t('ed.leave.title')}
          onCancel={() => dispatch({ type: 'leaving', proceed: null })}
          actions={
            <>
              <button type="button" autoFocus onClick={() => dispatch({ type: 'leaving', proceed: null })}>
                {t('ed.leave.stay')}
              </button>
              <button
                type="button"
                className="primary"
                disabled={busy || issues.length > 0 || jsonError !== null || conflict !== null}
                onClick={() => {
                  const proceed = leaving;
                  dispatch({ type: 'leaving', proceed: null });
                  void save(revision).then((ok) => ok && proceed());
                }}
              >
                {t('ed.leave.save')}
              </button>
              <button
                type="button"
                onClick={() => {
                  const proceed = leaving;
                  dispatch({ type: 'leaving', proceed: null });
                  proceed();
                }}
              >
                {t('ed.leave.keep')}
              </button>
              <button
                type="button"
                className="danger"
                onClick={() => {
                  const proceed = leaving;
                  dispatch({ type: 'leaving', proceed: null });
                  dropLocalDraft(ws, decision.id);
                  dispatch({ type: 'discard', at: Date.now() });
                  proceed();
                }}
              >
                {t('ed.leave.discard')}
              </button>
            </>
          }
        >
          <p>{t('ed.leave.body')}</p>
        </Dialog>
      )}
    </EditorContext.Provider>
  );
}

/** Whether `path` is `prefix` or below it. */
function within(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}.`);
}

/** The destinations that would call a plain http:// address, which deliveries refuse. */
function plainHttpDestinations(doc: Json): number[] {
  const destinations: Json[] = Array.isArray(doc?.destinations) ? doc.destinations : [];
  return destinations.flatMap((destination, index) =>
    destination && typeof destination.url === 'string' && /^http:\/\//i.test(destination.url.trim()) ? [index] : [],
  );
}

function ConflictPanel({
  conflict,
  doc,
  busy,
  onMerge,
  onLoadTheirs,
  onOverwrite,
}: {
  conflict: Conflict;
  doc: Json;
  busy: boolean;
  onMerge: () => void;
  onLoadTheirs: () => void;
  onOverwrite: () => void;
}) {
  const { t } = useApp();
  const list = (changes: Change[], source: Json) => (
    <ul>
      {changes.map((change) => (
        <li key={change.path}>
          {describePath(change.path, source, t)} <span className="muted small">({t(`dep.${change.kind}`)})</span>
        </li>
      ))}
    </ul>
  );
  return (
    <div className="conflict" role="alert" data-testid="conflict">
      <p>{t('ed.conflict', { revision: conflict.revision })}</p>
      <div className="grid">
        <div>
          <h3>{t('ed.conflict.theirs')}</h3>
          {list(conflict.theirChanges, conflict.theirs.draft)}
        </div>
        <div>
          <h3>{t('ed.conflict.mine')}</h3>
          {list(conflict.myChanges, doc)}
        </div>
      </div>
      {conflict.both.length > 0 ? (
        <>
          <h3>{t('ed.conflict.both')}</h3>
          <ul>
            {conflict.both.map((path) => (
              <li key={path}>{describePath(path, doc, t)}</li>
            ))}
          </ul>
        </>
      ) : (
        <p>{t('ed.conflict.clean')}</p>
      )}
      <div className="actions">
        <button type="button" className="primary" disabled={busy} onClick={onMerge}>
          {t('ed.conflict.merge')}
        </button>
        <button type="button" onClick={onLoadTheirs}>
          {t('ed.conflict.load')}
        </button>
        <ConfirmButton label={t('ed.conflict.overwrite')} subject="" question={t('ed.conflict.overwriteQuestion')} busy={busy} onConfirm={onOverwrite} />
      </div>
    </div>
  );
}

/** Focuses the control editing `path`, or the nearest one above it when the path has no control of its own. */
function focusPath(path: string): void {
  const parts = path.split('.');
  for (let n = parts.length; n >= 0; n--) {
    const element = document.getElementById(n === 0 ? 'sec-state' : fieldId(parts.slice(0, n).join('.')));
    if (element) {
      element.scrollIntoView({ block: 'center' });
      element.focus();
      return;
    }
  }
}

function FocusLink({ path, onShow, children }: { path: string; onShow: () => void; children: ReactNode }) {
  return (
    <a
      href={`#${fieldId(path)}`}
      onClick={(event) => {
        event.preventDefault();
        onShow();
        setTimeout(() => focusPath(path), 0);
      }}
    >
      {children}
    </a>
  );
}

function IssueList({
  issues,
  hidden,
  jsonError,
  doc,
  onShow,
}: {
  issues: SchemaIssue[];
  hidden: number;
  jsonError: string | null;
  doc: Json;
  onShow: () => void;
}) {
  const { t } = useApp();
  return (
    <div id="editor-issues" tabIndex={-1} className={issues.length > 0 || jsonError ? 'issues bad' : 'issues ok'} role="status" aria-live="polite">
      {jsonError ? (
        <p>{t('ed.jsonError', { message: jsonError })}</p>
      ) : issues.length === 0 ? (
        <p>{hidden > 0 ? t('ed.fixFirst', { count: hidden }) : t('ed.valid')}</p>
      ) : (
        <>
          <p>{t('ed.issues', { count: issues.length + hidden })}</p>
          <ul>
            {issues.map((issue, i) => (
              <li key={i} data-path={issue.path}>
                <FocusLink path={issue.path} onShow={onShow}>
                  {describePath(issue.path, doc, t)}
                </FocusLink>{' '}
                {issue.message}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

/**
 * The sticky bar wraps to two or three lines on narrow screens: its height, kept in `--editor-bar-height` (set
 * through the CSSOM, which the CSP allows), places the sticky outline below it and is the scroll margin of every
 * place a link jumps to, so neither hides under the bar.
 */
function useStickyBarHeight(): (element: HTMLDivElement | null) => void {
  const observer = useRef<ResizeObserver | null>(null);
  useEffect(
    () => () => {
      observer.current?.disconnect();
      document.documentElement.style.removeProperty('--editor-bar-height');
    },
    [],
  );
  return useCallback((element: HTMLDivElement | null) => {
    observer.current?.disconnect();
    if (!element || typeof ResizeObserver === 'undefined') return;
    const measure = () => document.documentElement.style.setProperty('--editor-bar-height', `${Math.ceil(element.getBoundingClientRect().height)}px`);
    observer.current = new ResizeObserver(measure);
    observer.current.observe(element);
    measure();
  }, []);
}

/** Links to the form's sections and questions, to move around a long schema. */
function Outline({ questions }: { questions: Json[] }) {
  const { t } = useApp();
  const jump = (id: string) => (event: { preventDefault(): void }) => {
    event.preventDefault();
    const target = document.getElementById(id);
    target?.scrollIntoView({ block: 'start' });
    target?.focus({ preventScroll: true });
  };
  const sections: Array<[string, string]> = [
    ['sec-state', t('ed.state')],
    ['sec-context', t('ed.context')],
    ['sec-questions', t('ed.questions')],
  ];
  const rest: Array<[string, string]> = [
    ['sec-composites', t('ed.composites')],
    ['sec-policies', t('ed.policies')],
    ['sec-destinations', t('ed.destinations')],
    ['sec-settings', t('ed.settings')],
  ];
  return (
    <nav className="outline" aria-label={t('ed.outline')}>
      <ul>
        {sections.map(([id, label]) => (
          <li key={id}>
            <a href={`#${id}`} onClick={jump(id)}>
              {label}
            </a>
          </li>
        ))}
        {questions.map((question, index) => (
          <li key={`q${index}`} className="sub">
            <a href={`#${fieldId(`questions.${index}`)}`} onClick={jump(fieldId(`questions.${index}`))}>
              {t('ed.question', { n: index + 1 })}
              {typeof question?.key === 'string' && question.key !== '' ? ` (${question.key})` : ''}
            </a>
          </li>
        ))}
        {rest.map(([id, label]) => (
          <li key={id}>
            <a href={`#${id}`} onClick={jump(id)}>
              {label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function SchemaForm({ doc, issues, update }: { doc: Json; issues: SchemaIssue[]; update: Update }) {
  const bound = fieldBinding(issues, update);
  const { t } = useApp();
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    return (
      <p className="issue">
        {issuesAt(issues, '')
          .map((issue) => issue.message)
          .join('; ')}
      </p>
    );
  }
  const settings = doc.settings ?? {};
  return (
    <div className="schema-form">
      <StateSection state={doc.state} issues={issues} update={update} />
      <section className="card" aria-labelledby="sec-context">
        <h2 tabIndex={-1} id="sec-context">
          {t('ed.context')}
        </h2>
        <TextField label={t('ed.context')} {...bound(['context'], doc.context)} multiline />
      </section>
      <QuestionsSection questions={Array.isArray(doc.questions) ? doc.questions : []} issues={issues} update={update} />
      <CompositesEditor doc={doc} issues={issues} update={update} />
      <PoliciesEditor doc={doc} issues={issues} update={update} />
      <DestinationsEditor doc={doc} issues={issues} update={update} />
      <section className="card" aria-labelledby="sec-settings">
        <h2 tabIndex={-1} id="sec-settings">
          {t('ed.settings')}
        </h2>
        <div className="grid">
          <SelectField
            label={t('ed.settings.engine')}
            {...bound(['settings', 'engine'], settings.engine)}
            options={[
              ['', t('ed.settings.engineDefault')],
              ['llm', 'llm'],
              ['checkpoint', 'checkpoint'],
            ]}
          />
          <TextField
            label={t('ed.settings.model')}
            {...bound(['settings', 'model'], settings.model)}
            update={(path, value) => update(path, value === '' ? undefined : value)}
          />
          <NumberField label={t('ed.settings.timeoutMs')} {...bound(['settings', 'timeoutMs'], settings.timeoutMs)} step="1" />
          <SelectField
            label={t('ed.settings.onEngineError')}
            {...bound(['settings', 'onEngineError'], settings.onEngineError)}
            options={[
              ['', '—'],
              ['fallback', 'fallback'],
              ['error', 'error'],
            ]}
          />
          <SelectField
            label={t('ed.settings.confidenceSource')}
            {...bound(['settings', 'confidenceSource'], settings.confidenceSource)}
            options={[
              ['', t('ed.settings.confidenceModel')],
              ['tokens', t('ed.settings.confidenceTokens')],
            ]}
          />
          <CheckField label={t('ed.settings.storeInput')} path={['settings', 'storeInput']} value={settings.storeInput} update={update} />
          <CheckField label={t('ed.settings.storeOutput')} path={['settings', 'storeOutput']} value={settings.storeOutput ?? true} update={update} />
        </div>
        <ReviewSettingsEditor review={settings.review} issues={issues} update={update} />
        <FieldIssues issues={issues} path="settings" />
      </section>
    </div>
  );
}

function StateSection({ state, issues, update }: { state: Json; issues: SchemaIssue[]; update: Update }) {
  const bound = fieldBinding(issues, update);
  const { t } = useApp();
  const type = state?.type;
  return (
    <section className="card" aria-labelledby="sec-state">
      <h2 tabIndex={-1} id="sec-state">
        {t('ed.state')}
      </h2>
      <SelectField
        label={t('ed.state.type')}
        {...bound(['state', 'type'], type)}
        update={(_path, value) =>
          update(['state'], value === 'object' ? { type: 'object', fields: {} } : value === 'list' ? { type: 'list', items: 'string' } : { type: value })
        }
        options={[
          ['object', 'object'],
          ['text', 'text'],
          ['list', 'list'],
        ]}
      />
      {type === 'list' && (
        <SelectField
          label={t('ed.field.type')}
          {...bound(['state', 'items'], state.items)}
          options={[
            ['string', 'string'],
            ['object', 'object'],
          ]}
        />
      )}
      {type === 'object' && <StateFields fields={state.fields} path={['state', 'fields']} depth={1} issues={issues} update={update} />}
    </section>
  );
}

/**
 * The fields of an object state, or an object field's sub-fields (`path` ends in `fields`): each with its name,
 * type, description, required flag, allowed values for a string and sub-fields for an object, down to the depth
 * the schema allows.
 */
function StateFields({ fields, path, depth, issues, update }: { fields: unknown; path: string[]; depth: number; issues: SchemaIssue[]; update: Update }) {
  const bound = fieldBinding(issues, update);
  const { t } = useApp();
  const entries: Array<[string, Json]> = fields && typeof fields === 'object' ? Object.entries(fields) : [];
  const dotted = path.join('.');
  const nested = depth > 1;
  const renameField = (from: string, to: string) => {
    // Keeps the order of the fields: the object is rebuilt with the one key replaced.
    const next: Record<string, Json> = {};
    for (const [name, field] of entries) next[name === from ? to : name] = field;
    update(path, next);
  };
  const add = () => {
    let n = entries.length + 1;
    while (entries.some(([name]) => name === `field_${n}`)) n++;
    update([...path, `field_${n}`], { type: 'string' });
    setTimeout(() => document.getElementById(fieldId(`${dotted}.field_${n}`))?.focus(), 0);
  };
  return (
    <div className={nested ? 'rows sub-fields' : 'rows'}>
      {nested && <h3>{t('ed.field.subFields')}</h3>}
      {nested && entries.length === 0 && <p className="muted small">{t('ed.field.subFieldsHint')}</p>}
      <FieldIssues issues={issues} path={dotted} />
      {entries.map(([name, field], index) => {
        const fieldPath = [...path, name];
        const at = fieldPath.join('.');
        return (
          <fieldset key={index} className="row">
            <legend>
              {t(nested ? 'ed.field.sub' : 'ed.field')} <code>{fieldName(fieldPath)}</code>
            </legend>
            <div className="grid">
              <label className="field">
                <span>{t('ed.field.name')}</span>
                <input id={fieldId(at)} value={name} onChange={(event) => renameField(name, event.target.value)} {...describedBy(issues, at)} />
                <FieldIssues issues={issues} path={at} />
              </label>
              <SelectField
                label={t('ed.field.type')}
                {...bound([...fieldPath, 'type'], field?.type)}
                update={(typePath, value) =>
                  // Sub-fields belong to object fields only: a type change away from object drops them.
                  value !== 'object' && field?.fields !== undefined ? update(fieldPath, { ...field, type: value, fields: undefined }) : update(typePath, value)
                }
                options={STATE_FIELD_TYPES.map((value): [string, string] => [value, value])}
              />
              <TextField label={t('ed.field.description')} {...bound([...fieldPath, 'description'], field?.description)} />
              <CheckField label={t('ed.field.required')} path={[...fieldPath, 'required']} value={field?.required} update={update} />
            </div>
            {(field?.type === 'string' || field?.enum !== undefined) && <EnumValues path={fieldPath} values={field?.enum} issues={issues} update={update} />}
            {(field?.type === 'object' || field?.fields !== undefined) &&
              (depth < limits.STATE_FIELD_DEPTH_MAX || field?.fields !== undefined ? (
                <StateFields fields={field?.fields} path={[...fieldPath, 'fields']} depth={depth + 1} issues={issues} update={update} />
              ) : (
                <p className="muted small">{t('ed.field.depthLimit', { depth: limits.STATE_FIELD_DEPTH_MAX })}</p>
              ))}
            <button type="button" className="link" onClick={() => update(fieldPath, undefined)}>
              {t('ed.remove')} <span className="visually-hidden">{at}</span>
            </button>
          </fieldset>
        );
      })}
      <button type="button" onClick={add}>
        {t(nested ? 'ed.field.subAdd' : 'ed.field.add')}
        {nested && <span className="visually-hidden"> {fieldName(path.slice(0, -1))}</span>}
      </button>
    </div>
  );
}

/** A field's name as a caller writes its place in the state: `address.street`. */
function fieldName(path: string[]): string {
  return path
    .slice(2)
    .filter((part, index) => index % 2 === 0)
    .join('.');
}

/** A string field's allowed values, one control each; none means any text. */
function EnumValues({ path: fieldPath, values, issues, update }: { path: string[]; values: unknown; issues: SchemaIssue[]; update: Update }) {
  const { t } = useApp();
  const { markFresh } = useContext(EditorContext);
  const name = fieldPath[fieldPath.length - 1];
  const path = [...fieldPath, 'enum'];
  const list: unknown[] = Array.isArray(values) ? values : [];
  const dotted = path.join('.');
  return (
    <div className="rows">
      <h3>{t('ed.field.enum')}</h3>
      {list.length === 0 && <p className="muted small">{t('ed.field.enumHint')}</p>}
      <FieldIssues issues={issues} path={dotted} />
      {list.map((value, i) => (
        <div key={i} className="row inline">
          <TextField label={t('ed.field.enumValue')} path={[...path, i]} issues={issues} value={value} update={update} />
          <button type="button" className="link" onClick={() => update(path, list.length === 1 ? undefined : list.filter((_, j) => j !== i))}>
            {t('ed.remove')} <span className="visually-hidden">{String(value)}</span>
          </button>
        </div>
      ))}
      <button
        type="button"
        onClick={() => {
          markFresh(`${dotted}.${list.length}`);
          update(path, [...list, '']);
          setTimeout(() => document.getElementById(fieldId(`${dotted}.${list.length}`))?.focus(), 0);
        }}
      >
        {t('ed.field.enumAdd')} <span className="visually-hidden">{name}</span>
      </button>
    </div>
  );
}

function QuestionsSection({ questions, issues, update }: { questions: Json[]; issues: SchemaIssue[]; update: Update }) {
  const { t } = useApp();
  // Said by its key, which rules and destinations use too; a question without one yet by its place.
  const nameOf = useCallback(
    (index: number) => {
      const key = questions[index]?.key;
      return typeof key === 'string' && key !== '' ? key : t('ed.question', { n: index + 1 });
    },
    [questions, t],
  );
  return (
    <section className="card" aria-labelledby="sec-questions">
      <h2 tabIndex={-1} id="sec-questions">
        {t('ed.questions')}
      </h2>
      <FieldIssues issues={issues} path="questions" />
      <SortableList count={questions.length} nameOf={nameOf} onMove={(from, to) => update(['questions'], moveItem(questions, from, to))}>
        {(index) => <Question index={index} count={questions.length} questions={questions} name={nameOf(index)} issues={issues} update={update} />}
      </SortableList>
      <button
        type="button"
        onClick={() => {
          let n = questions.length + 1;
          while (questions.some((question) => question?.key === `question_${n}`)) n++;
          update(['questions', questions.length], { key: `question_${n}`, kind: 'probability', instructions: '', criterion: '' });
        }}
      >
        {t('ed.question.add')}
      </button>
    </section>
  );
}

/** The reserved option that catches answers fitting no other; the form keeps it last. */
const OTHER = 'other';

/** What changing a question's kind would throw away, or null when it holds nothing worth keeping. */
function lostByKindChange(question: Json, t: ReturnType<typeof useApp>['t']): string | null {
  if (question?.kind === 'choice') {
    const options: Json[] = Array.isArray(question.options) ? question.options : [];
    const kept = options.filter((option) => option?.value !== OTHER);
    const isDefault = kept.length === 2 && kept[0]?.value === 'yes' && kept[1]?.value === 'no' && !kept.some((option) => option?.description);
    return kept.length === 0 || isDefault ? null : t('ed.kind.options', { count: options.length });
  }
  if (question?.kind === 'score') {
    const levels: Json[] = Array.isArray(question.levels) ? question.levels : [];
    return levels.length === 0 || sameJson(levels, ['low', 'medium', 'high']) ? null : t('ed.kind.levels', { count: levels.length });
  }
  const criterion = question?.criterion;
  return (criterion === undefined || criterion === '' || criterion === null) && question?.threshold === undefined ? null : t('ed.kind.criterion');
}

function Question({
  index,
  count,
  questions,
  name,
  issues,
  update,
}: {
  index: number;
  count: number;
  questions: Json[];
  name: string;
  issues: SchemaIssue[];
  update: Update;
}) {
  const bound = fieldBinding(issues, update);
  const { t } = useApp();
  const question = questions[index];
  const { ask, markFresh } = useContext(EditorContext);
  const base = ['questions', index];
  const kind = question?.kind;
  const options: Json[] = Array.isArray(question?.options) ? question.options : [];
  const otherAt = options.findIndex((option) => option?.value === OTHER);
  const label = String(question?.key ?? '');
  const changeKind = (next: string) => {
    if (next === kind) return;
    const lost = lostByKindChange(question, t);
    if (lost === null) replaceKind(next);
    else
      ask({
        title: t('ed.kind.title', { n: index + 1, kind: next }),
        body: t('ed.kind.body', { what: lost }),
        confirmLabel: t('ed.kind.confirm'),
        run: () => replaceKind(next),
      });
  };
  const replaceKind = (next: string) => {
    const common = {
      key: question.key,
      instructions: question.instructions,
      ...(question.minConfidence !== undefined ? { minConfidence: question.minConfidence } : {}),
    };
    if (next === 'choice') update(base, { ...common, kind: next, options: [{ value: 'yes' }, { value: 'no' }] });
    else if (next === 'score') update(base, { ...common, kind: next, levels: ['low', 'medium', 'high'] });
    else update(base, { ...common, kind: next, criterion: '' });
  };
  return (
    <fieldset className="question" id={fieldId(base.join('.'))} tabIndex={-1}>
      <legend>
        {t('ed.question', { n: index + 1 })}: <code>{label}</code>
      </legend>
      <ItemControls
        afterRemove="sec-questions"
        listPath={['questions']}
        index={index}
        count={count}
        name={name}
        items={questions}
        update={update}
        labels={{ up: t('ed.question.up'), down: t('ed.question.down'), remove: t('ed.question.remove') }}
        confirmRemoval={{
          title: t('ed.question.removeTitle', { name: label || t('ed.question', { n: index + 1 }) }),
          body: t('ed.question.removeBody'),
          confirm: t('ed.question.remove'),
        }}
      />
      <FieldIssues issues={issues} path={base.join('.')} />
      <div className="grid">
        <TextField
          label={t('ed.question.key')}
          {...bound([...base, 'key'], question?.key)}
          // Rules, destination conditions and composite terms follow the question to its new key.
          update={(path, value) => update(path, value, (next) => renameReferences(next, 'question', question?.key, value))}
        />
        <SelectField
          label={t('ed.question.kind')}
          {...bound([...base, 'kind'], kind)}
          update={(_path, value) => changeKind(value as string)}
          options={[
            ['choice', 'choice'],
            ['score', 'score'],
            ['probability', 'probability'],
          ]}
        />
        <NumberField label={t('ed.question.minConfidence')} {...bound([...base, 'minConfidence'], question?.minConfidence)} />
      </div>
      <TextField label={t('ed.question.instructions')} {...bound([...base, 'instructions'], question?.instructions)} multiline />
      {kind === 'choice' && (
        <div className="rows">
          <h3>{t('ed.question.options')}</h3>
          <FieldIssues issues={issues} path={[...base, 'options'].join('.')} />
          {options.map((option: Json, i: number) => {
            const fixed = option?.value === OTHER && i === options.length - 1;
            return (
              <div key={i} className="row inline">
                {fixed ? (
                  <p className="field">
                    <span>{t('ed.question.option')}</span>
                    <code id={fieldId([...base, 'options', i, 'value'].join('.'))} tabIndex={-1}>
                      {OTHER}
                    </code>
                    <small className="muted">{t('ed.question.otherFixed')}</small>
                  </p>
                ) : (
                  <TextField label={t('ed.question.option')} {...bound([...base, 'options', i, 'value'], option?.value)} />
                )}
                <TextField label={t('ed.question.optionDescription')} {...bound([...base, 'options', i, 'description'], option?.description)} />
                <button type="button" className="link" onClick={() => update([...base, 'options', i], undefined)}>
                  {t('ed.remove')} <span className="visually-hidden">{String(option?.value ?? '')}</span>
                </button>
              </div>
            );
          })}
          <button
            type="button"
            onClick={() => {
              // New options go above the reserved `other`, which stays last.
              const at = otherAt === options.length - 1 ? otherAt : options.length;
              markFresh([...base, 'options', at].join('.'));
              update([...base, 'options'], [...options.slice(0, at), { value: '' }, ...options.slice(at)]);
              setTimeout(() => document.getElementById(fieldId([...base, 'options', at, 'value'].join('.')))?.focus(), 0);
            }}
          >
            {t('ed.add')} <span className="visually-hidden">{t('ed.question.option')}</span>
          </button>
        </div>
      )}
      {kind === 'score' && (
        <div className="rows">
          <h3>{t('ed.question.levels')}</h3>
          <FieldIssues issues={issues} path={[...base, 'levels'].join('.')} />
          {(Array.isArray(question.levels) ? question.levels : []).map((level: Json, i: number) =>
            typeof level === 'string' ? (
              <div key={i} className="row inline">
                <TextField label={t('ed.question.level')} {...bound([...base, 'levels', i], level)} />
                <button type="button" className="link" onClick={() => update([...base, 'levels', i], undefined)}>
                  {t('ed.remove')} <span className="visually-hidden">{level}</span>
                </button>
              </div>
            ) : (
              <div key={i} className="row inline">
                <TextField label={t('ed.question.level')} {...bound([...base, 'levels', i, 'label'], level?.label)} />
                <TextField
                  label={t('ed.question.levelDescription')}
                  {...bound(
                    [...base, 'levels', i, 'rubric' in (level ?? {}) ? 'rubric' : 'description'],
                    'rubric' in (level ?? {}) ? level.rubric : level?.description,
                  )}
                />
                <button type="button" className="link" onClick={() => update([...base, 'levels', i], undefined)}>
                  {t('ed.remove')} <span className="visually-hidden">{String(level?.label ?? '')}</span>
                </button>
              </div>
            ),
          )}
          <button type="button" onClick={() => update([...base, 'levels', (question.levels ?? []).length], '')}>
            {t('ed.add')} <span className="visually-hidden">{t('ed.question.level')}</span>
          </button>
        </div>
      )}
      {kind === 'probability' && (
        <div className="grid">
          <TextField label={t('ed.question.criterion')} {...bound([...base, 'criterion'], question.criterion)} multiline />
          <NumberField label={t('ed.question.threshold')} {...bound([...base, 'threshold'], question.threshold)} />
        </div>
      )}
    </fieldset>
  );
}

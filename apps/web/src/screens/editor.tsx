import { ReactNode, useEffect, useMemo, useState } from 'react';
import { ACTIONS, SchemaIssue, STATE_FIELD_TYPES, validateSchema } from '@ds/decision-schema';
import { api, ApiError, DecisionDetails } from '../lib/api';
import { fieldId, issuesAt, issuesUnder, setIn } from '../lib/issues';
import { may, useApp } from '../context';
import { ErrorBox } from '../ui';

type Json = any;
type Update = (path: Array<string | number>, value: unknown) => void;

interface Conflict {
  revision: number;
}

/**
 * The schema as a form and as JSON, one document behind both: the form writes into it and the JSON text is
 * re-rendered; JSON text that parses replaces it. The service's own validator runs on every change.
 */
export function Editor({ decision, onSaved, reload }: { decision: DecisionDetails; onSaved: (decision: DecisionDetails) => void; reload: () => void }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const editable = may(workspace, 'decisions:write');
  const [doc, setDoc] = useState<Json>(decision.draft);
  const [text, setText] = useState(() => JSON.stringify(decision.draft, null, 2));
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [view, setView] = useState<'form' | 'json'>('form');
  const [revision, setRevision] = useState(decision.revision);
  const [dirty, setDirty] = useState(false);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);

  // A reload (after a conflict, "load theirs") brings a new revision: the editor starts again from it.
  useEffect(() => {
    setDoc(decision.draft);
    setText(JSON.stringify(decision.draft, null, 2));
    setRevision(decision.revision);
    setJsonError(null);
    setDirty(false);
  }, [decision.id, decision.revision, decision.draft]);

  const result = useMemo(() => validateSchema(doc), [doc]);
  const issues: SchemaIssue[] = result.valid ? [] : result.issues;

  const update: Update = (path, value) => {
    const next = setIn(doc, path, value);
    setDoc(next);
    setText(JSON.stringify(next, null, 2));
    setJsonError(null);
    setDirty(true);
    setSaved(null);
  };

  const editText = (value: string) => {
    setText(value);
    setDirty(true);
    setSaved(null);
    try {
      setDoc(JSON.parse(value));
      setJsonError(null);
    } catch (failure) {
      setJsonError((failure as Error).message);
    }
  };

  const save = async (baseRevision: number) => {
    setBusy(true);
    setError(null);
    try {
      const reply = await api<{ revision: number }>('PUT', `/workspaces/${ws}/decisions/${decision.id}/draft`, { schema: doc, revision: baseRevision });
      setRevision(reply.revision);
      setConflict(null);
      setDirty(false);
      setSaved(reply.revision);
      onSaved({ ...decision, draft: doc, revision: reply.revision });
    } catch (failure) {
      if (failure instanceof ApiError && failure.code === 'CONFLICT') {
        const current = (failure.details as { currentRevision?: number } | null)?.currentRevision;
        setConflict({ revision: typeof current === 'number' ? current : baseRevision + 1 });
      } else {
        setError(failure);
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="editor">
      <div className="toolbar">
        <div role="group" aria-label={t('ed.view')} className="segmented">
          <button type="button" aria-pressed={view === 'form'} onClick={() => setView('form')}>
            {t('ed.form')}
          </button>
          <button type="button" aria-pressed={view === 'json'} onClick={() => setView('json')}>
            {t('ed.json')}
          </button>
        </div>
        <span className="muted small">
          {t('ed.revision', { revision })}
          {dirty && <> · {t('ed.unsaved')}</>}
        </span>
        {editable && (
          <button
            type="button"
            className="primary"
            disabled={busy || jsonError !== null || issues.length > 0 || conflict !== null}
            onClick={() => void save(revision)}
          >
            {t('ed.save')}
          </button>
        )}
      </div>
      {!editable && <p className="notice">{t(workspace?.permissions ? 'ed.readOnlyEmbed' : 'ed.readOnly')}</p>}
      {saved !== null && (
        <p className="notice" role="status">
          {t('ed.saved', { revision: saved })}
        </p>
      )}
      {conflict && (
        <div className="conflict" role="alert">
          <p>{t('ed.conflict', { revision: conflict.revision })}</p>
          <div className="actions">
            <button
              type="button"
              onClick={() => {
                setConflict(null);
                reload();
              }}
            >
              {t('ed.conflict.load')}
            </button>
            <button type="button" className="primary" disabled={busy} onClick={() => void save(conflict.revision)}>
              {t('ed.conflict.overwrite')}
            </button>
          </div>
        </div>
      )}
      {error !== null && <ErrorBox error={error} />}
      <IssueList issues={issues} jsonError={jsonError} onShow={() => setView('form')} />
      <fieldset disabled={!editable} className="plain">
        <legend className="visually-hidden">{decision.name}</legend>
        {view === 'json' ? (
          <label className="json-editor">
            <span>{t('ed.json')}</span>
            <textarea
              id="schema-json"
              value={text}
              spellCheck={false}
              rows={30}
              aria-invalid={jsonError !== null}
              aria-describedby={jsonError ? 'json-error' : undefined}
              onChange={(event) => editText(event.target.value)}
            />
            {jsonError && (
              <span id="json-error" className="issue">
                {t('ed.jsonError', { message: jsonError })}
              </span>
            )}
          </label>
        ) : jsonError ? (
          <p className="issue">{t('ed.jsonError', { message: jsonError })}</p>
        ) : (
          <SchemaForm doc={doc} issues={issues} update={update} />
        )}
      </fieldset>
    </div>
  );
}

function IssueList({ issues, jsonError, onShow }: { issues: SchemaIssue[]; jsonError: string | null; onShow: () => void }) {
  const { t } = useApp();
  return (
    <div className={issues.length > 0 || jsonError ? 'issues bad' : 'issues ok'} role="status" aria-live="polite">
      {jsonError ? (
        <p>{t('ed.jsonError', { message: jsonError })}</p>
      ) : issues.length === 0 ? (
        <p>{t('ed.valid')}</p>
      ) : (
        <>
          <p>{t('ed.issues', { count: issues.length })}</p>
          <ul>
            {issues.map((issue, i) => (
              <li key={i} data-path={issue.path}>
                <a
                  href={`#${fieldId(issue.path)}`}
                  onClick={(event) => {
                    event.preventDefault();
                    onShow();
                    setTimeout(() => document.getElementById(fieldId(issue.path))?.focus(), 0);
                  }}
                >
                  <code>{issue.path || '(root)'}</code>
                </a>{' '}
                {issue.message}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

/** Messages for one control, linked to it with aria-describedby. */
function FieldIssues({ issues, path }: { issues: SchemaIssue[]; path: string }) {
  const here = issuesAt(issues, path);
  if (here.length === 0) return null;
  return (
    <span id={`${fieldId(path)}-issues`} className="issue">
      {here.map((issue) => issue.message).join('; ')}
    </span>
  );
}

function describedBy(issues: SchemaIssue[], path: string) {
  return issuesAt(issues, path).length > 0 ? { 'aria-invalid': true, 'aria-describedby': `${fieldId(path)}-issues` } : {};
}

interface FieldProps {
  label: string;
  path: Array<string | number>;
  issues: SchemaIssue[];
  children?: ReactNode;
}

function TextField({
  label,
  path,
  issues,
  value,
  update,
  multiline,
  placeholder,
}: FieldProps & { value: unknown; update: Update; multiline?: boolean; placeholder?: string }) {
  const dotted = path.join('.');
  // Rich text (JSON) is edited as JSON so that nothing of it is lost.
  const isText = value === undefined || value === null || typeof value === 'string';
  const shown = isText ? ((value as string | null | undefined) ?? '') : JSON.stringify(value);
  const change = (raw: string) => {
    if (isText) update(path, raw);
    else {
      try {
        update(path, JSON.parse(raw));
      } catch {
        update(path, raw);
      }
    }
  };
  const common = {
    id: fieldId(dotted),
    value: shown,
    placeholder,
    onChange: (event: { target: { value: string } }) => change(event.target.value),
    ...describedBy(issues, dotted),
  };
  return (
    <label className="field">
      <span>{label}</span>
      {multiline ? <textarea rows={3} {...common} /> : <input {...common} />}
      <FieldIssues issues={issues} path={dotted} />
    </label>
  );
}

function NumberField({ label, path, issues, value, update, step }: FieldProps & { value: unknown; update: Update; step?: string }) {
  const dotted = path.join('.');
  return (
    <label className="field">
      <span>{label}</span>
      <input
        id={fieldId(dotted)}
        type="number"
        step={step ?? 'any'}
        value={typeof value === 'number' ? value : ''}
        onChange={(event) => update(path, event.target.value === '' ? undefined : Number(event.target.value))}
        {...describedBy(issues, dotted)}
      />
      <FieldIssues issues={issues} path={dotted} />
    </label>
  );
}

function SelectField({ label, path, issues, value, update, options }: FieldProps & { value: unknown; update: Update; options: Array<[string, string]> }) {
  const dotted = path.join('.');
  return (
    <label className="field">
      <span>{label}</span>
      <select
        id={fieldId(dotted)}
        value={typeof value === 'string' ? value : ''}
        onChange={(event) => update(path, event.target.value === '' ? undefined : event.target.value)}
        {...describedBy(issues, dotted)}
      >
        {options.map(([optionValue, optionLabel]) => (
          <option key={optionValue} value={optionValue}>
            {optionLabel}
          </option>
        ))}
      </select>
      <FieldIssues issues={issues} path={dotted} />
    </label>
  );
}

function CheckField({ label, path, value, update }: { label: string; path: Array<string | number>; value: unknown; update: Update }) {
  return (
    <label className="check">
      <input id={fieldId(path.join('.'))} type="checkbox" checked={value === true} onChange={(event) => update(path, event.target.checked)} />
      <span>{label}</span>
    </label>
  );
}

/** A part of the schema edited as JSON inside the form, with its own parse error. */
function JsonField({ label, path, issues, value, update }: FieldProps & { value: unknown; update: Update }) {
  const dotted = path.join('.');
  const [text, setText] = useState(() => JSON.stringify(value ?? [], null, 2));
  const [parseError, setParseError] = useState<string | null>(null);
  const serialized = JSON.stringify(value ?? [], null, 2);
  useEffect(() => {
    if (parseError === null) setText(serialized);
  }, [serialized, parseError]);
  const below = issuesUnder(issues, dotted);
  return (
    <label className="field">
      <span>{label}</span>
      <textarea
        id={fieldId(dotted)}
        rows={Math.min(16, Math.max(4, text.split('\n').length))}
        spellCheck={false}
        value={text}
        aria-invalid={parseError !== null || below.length > 0}
        aria-describedby={`${fieldId(dotted)}-issues`}
        onChange={(event) => {
          setText(event.target.value);
          try {
            update(path, JSON.parse(event.target.value));
            setParseError(null);
          } catch (failure) {
            setParseError((failure as Error).message);
          }
        }}
      />
      <span id={`${fieldId(dotted)}-issues`} className="issue">
        {parseError ?? below.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}
      </span>
    </label>
  );
}

function SchemaForm({ doc, issues, update }: { doc: Json; issues: SchemaIssue[]; update: Update }) {
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
        <h2 id="sec-context">{t('ed.context')}</h2>
        <TextField label={t('ed.context')} path={['context']} issues={issues} value={doc.context} update={update} multiline />
      </section>
      <QuestionsSection questions={Array.isArray(doc.questions) ? doc.questions : []} issues={issues} update={update} />
      <section className="card" aria-labelledby="sec-composites">
        <h2 id="sec-composites">{t('ed.composites')}</h2>
        <JsonField label={t('ed.sectionJson', { section: t('ed.composites') })} path={['composites']} issues={issues} value={doc.composites} update={update} />
      </section>
      <section className="card" aria-labelledby="sec-policies">
        <h2 id="sec-policies">{t('ed.policies')}</h2>
        <JsonField label={t('ed.sectionJson', { section: t('ed.policies') })} path={['policies']} issues={issues} value={doc.policies} update={update} />
        <SelectField
          label={t('ed.fallbackAction')}
          path={['fallbackAction']}
          issues={issues}
          value={doc.fallbackAction}
          update={update}
          options={[['', '—'], ...ACTIONS.map((a): [string, string] => [a, a])]}
        />
      </section>
      <section className="card" aria-labelledby="sec-destinations">
        <h2 id="sec-destinations">{t('ed.destinations')}</h2>
        <JsonField
          label={t('ed.sectionJson', { section: t('ed.destinations') })}
          path={['destinations']}
          issues={issues}
          value={doc.destinations}
          update={update}
        />
      </section>
      <section className="card" aria-labelledby="sec-settings">
        <h2 id="sec-settings">{t('ed.settings')}</h2>
        <div className="grid">
          <SelectField
            label={t('ed.settings.engine')}
            path={['settings', 'engine']}
            issues={issues}
            value={settings.engine}
            update={update}
            options={[
              ['', t('ed.settings.engineDefault')],
              ['llm', 'llm'],
              ['checkpoint', 'checkpoint'],
            ]}
          />
          <TextField
            label={t('ed.settings.model')}
            path={['settings', 'model']}
            issues={issues}
            value={settings.model}
            update={(path, value) => update(path, value === '' ? undefined : value)}
          />
          <NumberField
            label={t('ed.settings.timeoutMs')}
            path={['settings', 'timeoutMs']}
            issues={issues}
            value={settings.timeoutMs}
            update={update}
            step="1"
          />
          <SelectField
            label={t('ed.settings.onEngineError')}
            path={['settings', 'onEngineError']}
            issues={issues}
            value={settings.onEngineError}
            update={update}
            options={[
              ['', '—'],
              ['fallback', 'fallback'],
              ['error', 'error'],
            ]}
          />
          <CheckField label={t('ed.settings.storeInput')} path={['settings', 'storeInput']} value={settings.storeInput} update={update} />
          <CheckField label={t('ed.settings.storeOutput')} path={['settings', 'storeOutput']} value={settings.storeOutput ?? true} update={update} />
        </div>
        <FieldIssues issues={issues} path="settings" />
      </section>
    </div>
  );
}

function StateSection({ state, issues, update }: { state: Json; issues: SchemaIssue[]; update: Update }) {
  const { t } = useApp();
  const type = state?.type;
  const fields: Array<[string, Json]> = type === 'object' && state.fields && typeof state.fields === 'object' ? Object.entries(state.fields) : [];
  const renameField = (from: string, to: string) => {
    // Keeps the order of the fields: the object is rebuilt with the one key replaced.
    const next: Record<string, Json> = {};
    for (const [name, field] of fields) next[name === from ? to : name] = field;
    update(['state', 'fields'], next);
  };
  return (
    <section className="card" aria-labelledby="sec-state">
      <h2 id="sec-state">{t('ed.state')}</h2>
      <SelectField
        label={t('ed.state.type')}
        path={['state', 'type']}
        issues={issues}
        value={type}
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
          path={['state', 'items']}
          issues={issues}
          value={state.items}
          update={update}
          options={[
            ['string', 'string'],
            ['object', 'object'],
          ]}
        />
      )}
      {type === 'object' && (
        <div className="rows">
          {fields.map(([name, field], index) => (
            <fieldset key={index} className="row">
              <legend>
                {t('ed.field')} <code>{name}</code>
              </legend>
              <div className="grid">
                <label className="field">
                  <span>{t('ed.field.name')}</span>
                  <input
                    id={fieldId(`state.fields.${name}`)}
                    value={name}
                    onChange={(event) => renameField(name, event.target.value)}
                    {...describedBy(issues, `state.fields.${name}`)}
                  />
                  <FieldIssues issues={issues} path={`state.fields.${name}`} />
                </label>
                <SelectField
                  label={t('ed.field.type')}
                  path={['state', 'fields', name, 'type']}
                  issues={issues}
                  value={field?.type}
                  update={update}
                  options={STATE_FIELD_TYPES.map((value): [string, string] => [value, value])}
                />
                <TextField
                  label={t('ed.field.description')}
                  path={['state', 'fields', name, 'description']}
                  issues={issues}
                  value={field?.description}
                  update={update}
                />
                <CheckField label={t('ed.field.required')} path={['state', 'fields', name, 'required']} value={field?.required} update={update} />
              </div>
              <button type="button" className="link" onClick={() => update(['state', 'fields', name], undefined)}>
                {t('ed.remove')} <span className="visually-hidden">{name}</span>
              </button>
            </fieldset>
          ))}
          <button
            type="button"
            onClick={() => {
              let n = fields.length + 1;
              while (fields.some(([name]) => name === `field_${n}`)) n++;
              update(['state', 'fields', `field_${n}`], { type: 'string' });
            }}
          >
            {t('ed.field.add')}
          </button>
        </div>
      )}
    </section>
  );
}

function QuestionsSection({ questions, issues, update }: { questions: Json[]; issues: SchemaIssue[]; update: Update }) {
  const { t } = useApp();
  return (
    <section className="card" aria-labelledby="sec-questions">
      <h2 id="sec-questions">{t('ed.questions')}</h2>
      <FieldIssues issues={issues} path="questions" />
      {questions.map((question, index) => (
        <Question key={index} index={index} question={question} issues={issues} update={update} />
      ))}
      <button
        type="button"
        onClick={() =>
          update(['questions', questions.length], { key: `question_${questions.length + 1}`, kind: 'probability', instructions: '', criterion: '' })
        }
      >
        {t('ed.question.add')}
      </button>
    </section>
  );
}

function Question({ index, question, issues, update }: { index: number; question: Json; issues: SchemaIssue[]; update: Update }) {
  const { t } = useApp();
  const base = ['questions', index];
  const kind = question?.kind;
  const changeKind = (next: string) => {
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
    <fieldset className="question">
      <legend>
        {t('ed.question', { n: index + 1 })}: <code>{String(question?.key ?? '')}</code>
      </legend>
      <FieldIssues issues={issues} path={base.join('.')} />
      <div className="grid">
        <TextField label={t('ed.question.key')} path={[...base, 'key']} issues={issues} value={question?.key} update={update} />
        <SelectField
          label={t('ed.question.kind')}
          path={[...base, 'kind']}
          issues={issues}
          value={kind}
          update={(_path, value) => changeKind(value as string)}
          options={[
            ['choice', 'choice'],
            ['score', 'score'],
            ['probability', 'probability'],
          ]}
        />
        <NumberField label={t('ed.question.minConfidence')} path={[...base, 'minConfidence']} issues={issues} value={question?.minConfidence} update={update} />
      </div>
      <TextField
        label={t('ed.question.instructions')}
        path={[...base, 'instructions']}
        issues={issues}
        value={question?.instructions}
        update={update}
        multiline
      />
      {kind === 'choice' && (
        <div className="rows">
          <h3>{t('ed.question.options')}</h3>
          <FieldIssues issues={issues} path={[...base, 'options'].join('.')} />
          {(Array.isArray(question.options) ? question.options : []).map((option: Json, i: number) => (
            <div key={i} className="row inline">
              <TextField label={t('ed.question.option')} path={[...base, 'options', i, 'value']} issues={issues} value={option?.value} update={update} />
              <TextField
                label={t('ed.question.optionDescription')}
                path={[...base, 'options', i, 'description']}
                issues={issues}
                value={option?.description}
                update={update}
              />
              <button type="button" className="link" onClick={() => update([...base, 'options', i], undefined)}>
                {t('ed.remove')} <span className="visually-hidden">{String(option?.value ?? '')}</span>
              </button>
            </div>
          ))}
          <button type="button" onClick={() => update([...base, 'options', (question.options ?? []).length], { value: '' })}>
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
                <TextField label={t('ed.question.level')} path={[...base, 'levels', i]} issues={issues} value={level} update={update} />
                <button type="button" className="link" onClick={() => update([...base, 'levels', i], undefined)}>
                  {t('ed.remove')} <span className="visually-hidden">{level}</span>
                </button>
              </div>
            ) : (
              <div key={i} className="row inline">
                <TextField label={t('ed.question.level')} path={[...base, 'levels', i, 'label']} issues={issues} value={level?.label} update={update} />
                <TextField
                  label={t('ed.question.levelDescription')}
                  path={[...base, 'levels', i, 'rubric' in (level ?? {}) ? 'rubric' : 'description']}
                  issues={issues}
                  value={'rubric' in (level ?? {}) ? level.rubric : level?.description}
                  update={update}
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
          <TextField label={t('ed.question.criterion')} path={[...base, 'criterion']} issues={issues} value={question.criterion} update={update} multiline />
          <NumberField label={t('ed.question.threshold')} path={[...base, 'threshold']} issues={issues} value={question.threshold} update={update} />
        </div>
      )}
    </fieldset>
  );
}

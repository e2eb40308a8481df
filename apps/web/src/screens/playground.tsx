import { ReactNode, useEffect, useMemo, useState } from 'react';
import { NormalizedSchema, startingState, StateField, TEMPLATES, validateSchema } from '@ds/decision-schema';
import { api, DecisionDetails } from '../lib/api';
import { formatAnswer, formatDecimal, formatShare } from '../lib/numbers';
import { reasonMessage } from '../lib/reasons';
import { may, useApp } from '../context';
import { Link, useLocation } from '../router';
import { ErrorBox } from '../ui';
import { DataTable } from '../components/data-table';

type Json = any;

function normalized(schema: unknown): NormalizedSchema | null {
  if (schema === null || schema === undefined) return null;
  const checked = validateSchema(schema);
  return checked.valid ? checked.schema : null;
}

export function Playground({ decision }: { decision: DecisionDetails }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const [version, setVersion] = useState<number | null>(null);
  const draft = useMemo(() => normalized(decision.draft), [decision.draft]);
  const active = useMemo(() => normalized(decision.active_schema), [decision.active_schema]);
  // The state form follows the schema being run; a version other than the active one is run from JSON.
  const schema = version === null ? draft : version === decision.active_version ? active : null;
  // A template's sample reads like a real case, where a generated "example" in every field tells the author nothing.
  const [state, setState] = useState<Json>(() => (draft ? startingState(draft, TEMPLATES) : {}));
  const [mode, setMode] = useState<'form' | 'json'>(schema?.state.type === 'object' ? 'form' : 'json');
  const [text, setText] = useState(() => JSON.stringify(state, null, 2));
  const [textError, setTextError] = useState<string | null>(null);
  const [result, setResult] = useState<Json | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const from = new URLSearchParams(useLocation().search).get('from');
  const [fromExecution, setFromExecution] = useState<{ id: string; kept: boolean } | null>(null);

  // Opened from a past execution: start from the state it was called with, once, where it was kept.
  useEffect(() => {
    if (!from) return;
    let live = true;
    api<{ execution_id: string; decision_id: string; kept: boolean; state?: Json }>(
      'GET',
      `/workspaces/${ws}/executions/${encodeURIComponent(from)}/input`,
    ).then(
      (input) => {
        if (!live || input.decision_id !== decision.id) return;
        if (input.kept) setBoth(input.state);
        setFromExecution({ id: input.execution_id, kept: input.kept });
      },
      (failure) => live && setError(failure),
    );
    return () => {
      live = false;
    };
  }, [ws, decision.id, from]);

  const setBoth = (next: Json) => {
    setState(next);
    setText(JSON.stringify(next, null, 2));
  };

  const run = async () => {
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      setResult(await api('POST', `/workspaces/${ws}/decisions/${decision.id}/playground`, { version, state }));
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="stack">
      <p className="muted">{t('pg.note')}</p>
      {fromExecution && (
        <p className={fromExecution.kept ? 'notice' : 'issue'} role="status" data-testid="playground-from">
          {fromExecution.kept ? t('pg.fromExecution') : t('ex.noState')}{' '}
          <Link href={`/executions/${fromExecution.id}`}>
            <code>{fromExecution.id}</code>
          </Link>
        </p>
      )}
      <div className="card">
        <div className="grid">
          <label className="field">
            <span>{t('pg.version')}</span>
            <select
              value={version === null ? 'draft' : String(version)}
              onChange={(event) => setVersion(event.target.value === 'draft' ? null : Number(event.target.value))}
            >
              <option value="draft">{t('pg.draft')}</option>
              {decision.versions.map((n) => (
                <option key={n} value={n}>
                  {t('pg.versionN', { version: n })}
                </option>
              ))}
            </select>
          </label>
          <div role="group" aria-label={t('pg.state')} className="segmented">
            <button type="button" aria-pressed={mode === 'form'} disabled={schema?.state.type !== 'object'} onClick={() => setMode('form')}>
              {t('pg.stateForm')}
            </button>
            <button type="button" aria-pressed={mode === 'json'} onClick={() => setMode('json')}>
              {t('pg.stateJson')}
            </button>
          </div>
          {schema && (
            <div className="actions">
              <button
                type="button"
                onClick={() => {
                  setBoth(startingState(schema, TEMPLATES));
                  setTextError(null);
                }}
              >
                {t('pg.sample')}
              </button>
            </div>
          )}
        </div>
        {version === null && !draft && <p className="issue">{t('pg.invalidDraft')}</p>}
        {mode === 'form' && schema?.state.type === 'object' ? (
          <StateForm fields={schema.state.fields} value={state ?? {}} onChange={setBoth} />
        ) : (
          <label className="field">
            <span>{t('pg.state')} (JSON)</span>
            <textarea
              rows={12}
              spellCheck={false}
              value={text}
              aria-invalid={textError !== null}
              aria-describedby="state-json-error"
              onChange={(event) => {
                setText(event.target.value);
                try {
                  setState(JSON.parse(event.target.value));
                  setTextError(null);
                } catch (failure) {
                  setTextError((failure as Error).message);
                }
              }}
            />
            <span id="state-json-error" className="issue">
              {textError ?? ''}
            </span>
          </label>
        )}
        <button type="button" className="primary" disabled={busy || textError !== null || !may(workspace, 'decisions:write')} onClick={() => void run()}>
          {busy ? t('pg.running') : t('pg.run')}
        </button>
      </div>
      {error !== null && <ErrorBox error={error} />}
      {result && <RunResult result={result} />}
    </div>
  );
}

function StateForm({ fields, value, onChange }: { fields: Record<string, StateField>; value: Record<string, Json>; onChange: (next: Json) => void }) {
  const set = (name: string, next: unknown) => {
    const copy = { ...value };
    if (next === undefined) delete copy[name];
    else copy[name] = next;
    onChange(copy);
  };
  return (
    <div className="grid state-form">
      {Object.entries(fields).map(([name, field]) => {
        const id = `state-${name}`;
        const label = (
          <span>
            {name}
            {field.required && ' *'}
            {field.description && <small className="muted"> — {field.description}</small>}
          </span>
        );
        if (field.type === 'boolean') {
          return (
            <label key={name} className="check">
              <input id={id} type="checkbox" checked={value[name] === true} onChange={(event) => set(name, event.target.checked)} />
              {label}
            </label>
          );
        }
        if (field.type === 'string' && field.enum) {
          return (
            <label key={name} className="field">
              {label}
              <select
                id={id}
                value={typeof value[name] === 'string' ? value[name] : ''}
                onChange={(event) => set(name, event.target.value === '' ? undefined : event.target.value)}
              >
                <option value="">—</option>
                {field.enum.map((option) => (
                  <option key={option} value={option}>
                    {option}
                  </option>
                ))}
              </select>
            </label>
          );
        }
        if (field.type === 'number' || field.type === 'integer') {
          return (
            <label key={name} className="field">
              {label}
              <input
                id={id}
                type="number"
                step={field.type === 'integer' ? '1' : 'any'}
                value={typeof value[name] === 'number' ? value[name] : ''}
                onChange={(event) => set(name, event.target.value === '' ? undefined : Number(event.target.value))}
              />
            </label>
          );
        }
        if (field.type === 'object' || field.type === 'array') {
          return <JsonInput key={name} id={id} label={label} value={value[name]} onChange={(next) => set(name, next)} />;
        }
        return (
          <label key={name} className="field">
            {label}
            <textarea
              id={id}
              rows={2}
              value={typeof value[name] === 'string' ? value[name] : ''}
              onChange={(event) => set(name, event.target.value === '' ? undefined : event.target.value)}
            />
          </label>
        );
      })}
    </div>
  );
}

function JsonInput({ id, label, value, onChange }: { id: string; label: ReactNode; value: unknown; onChange: (next: unknown) => void }) {
  const [text, setText] = useState(value === undefined ? '' : JSON.stringify(value));
  const [bad, setBad] = useState(false);
  return (
    <label className="field">
      {label}
      <textarea
        id={id}
        rows={2}
        spellCheck={false}
        value={text}
        aria-invalid={bad}
        onChange={(event) => {
          setText(event.target.value);
          if (event.target.value.trim() === '') {
            setBad(false);
            onChange(undefined);
            return;
          }
          try {
            onChange(JSON.parse(event.target.value));
            setBad(false);
          } catch {
            setBad(true);
          }
        }}
      />
    </label>
  );
}

export function RunResult({ result }: { result: Json }) {
  const { t, locale } = useApp();
  const share = (value: unknown) => (typeof value === 'number' ? formatShare(value, locale) : '—');
  const decimal = (value: unknown) => (typeof value === 'number' ? formatDecimal(value, locale) : '—');
  const keys = Object.keys(result.result ?? {});
  return (
    <section className="card result" aria-labelledby="result-title">
      <h2 id="result-title">{t('pg.result')}</h2>
      <p className="action-line">
        {t('pg.action')}: <strong className={`badge action-${result.action}`}>{String(result.action ?? '—')}</strong>
      </p>
      {result.action_reason && (
        <p>
          {t('pg.reason')}: <ReasonText reason={result.action_reason} action={result.action} />
        </p>
      )}
      <DataTable
        label={t('pg.result')}
        caption="none"
        cards={false}
        rows={keys}
        rowKey={(key) => key}
        columns={[
          { key: 'key', header: t('ed.question.key'), rowHeader: true, cell: (key) => <code>{key}</code> },
          { key: 'answer', header: t('pg.answer'), cell: (key) => formatAnswer(result.result[key], locale) },
          { key: 'confidence', header: t('pg.confidence'), cell: (key) => share(result.confidence?.[key]) },
          { key: 'scores', header: t('pg.scores'), cell: (key) => decimal(result.scores?.[key]) },
        ]}
      />
      {result.composites && Object.keys(result.composites).length > 0 && (
        <>
          <h3>{t('pg.composites')}</h3>
          <ul>
            {Object.entries(result.composites).map(([key, value]) => (
              <li key={key}>
                <code>{key}</code>: {decimal(value)}
              </li>
            ))}
          </ul>
        </>
      )}
      {Array.isArray(result.destinations) && result.destinations.length > 0 && (
        <>
          <h3>{t('pg.destinations')}</h3>
          <ul className="destinations">
            {result.destinations.map((destination: Json) => (
              <li key={destination.key}>
                <strong>{destination.key}</strong> <span className="tag">{destination.type}</span>{' '}
                {destination.status && <span className="badge">{destination.status}</span>}
                {destination.status === 'preview' && <p className="muted small">{t('pg.preview')}</p>}
                <pre className="code">{JSON.stringify(destination.request ?? destination, null, 2)}</pre>
              </li>
            ))}
          </ul>
        </>
      )}
      <details>
        <summary>JSON</summary>
        <pre className="code">{JSON.stringify(result, null, 2)}</pre>
      </details>
    </section>
  );
}

function ReasonText({ reason, action }: { reason: Json; action: Json }) {
  const { t, locale } = useApp();
  const message = reasonMessage(reason, action, (value) => formatShare(value, locale));
  return message ? <>{t(message.key, message.vars)}</> : <code>{JSON.stringify(reason)}</code>;
}

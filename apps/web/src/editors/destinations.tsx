import { ReactNode, useContext } from 'react';
import {
  AGENT_MODES,
  DESTINATION_TYPES,
  DestinationType,
  freshParamSource,
  hasUrl,
  HTTP_METHODS,
  limits,
  operandsOf,
  paramSources,
  retypeDestination,
  SchemaIssue,
  takesHeaders,
  templatePlaceholders,
} from '@ds/decision-schema';
import { useApp } from '../context';
import { fieldId } from '../lib/issues';
import { freshKey, moveItem, removeItem, renameKey } from '../lib/lists';
import { CheckField, describedBy, EditorContext, fieldBinding, FieldIssues, NumberField, SelectField, TextField, Update } from './fields';
import { ConditionList, focusSoon, ItemControls } from './parts';
import { SortableList } from './sortable';

type Json = any;
type Path = Array<string | number>;

/** Destinations: the common parts (key, type, description, conditions, params, headers) and each type's own fields. */
export function DestinationsEditor({ doc, issues, update }: { doc: Json; issues: SchemaIssue[]; update: Update }) {
  const bound = fieldBinding(issues, update);
  const { t } = useApp();
  const { markFresh } = useContext(EditorContext);
  const destinations: Json[] = Array.isArray(doc.destinations) ? doc.destinations : [];
  const operands = operandsOf(doc, true);
  const sources = paramSources(doc);
  const nameOf = (index: number) => {
    const key = destinations[index]?.key;
    return `${t('dest.n', { n: index + 1 })}${key ? ` (${key})` : ''}`;
  };
  return (
    <section className="card" aria-labelledby="sec-destinations">
      <h2 tabIndex={-1} id="sec-destinations">
        {t('ed.destinations')}
      </h2>
      <p className="muted small">{t('dest.lead')}</p>
      <FieldIssues issues={issues} path="destinations" />
      {destinations.length === 0 && <p className="muted">{t('dest.none')}</p>}
      <datalist id="param-sources">
        {sources.map((source) => (
          <option key={source} value={source} />
        ))}
      </datalist>
      <SortableList count={destinations.length} nameOf={nameOf} onMove={(from, to) => update(['destinations'], moveItem(destinations, from, to))}>
        {(index) => {
          const destination = destinations[index];
          const base = ['destinations', index];
          const type = destination?.type as DestinationType;
          const name = nameOf(index);
          const when: Json[] = Array.isArray(destination?.when) ? destination.when : [];
          const placeholders = templatePlaceholders(destination);
          const text = (property: string, label: string, multiline = false) => (
            <TextField
              label={label}
              {...bound([...base, property], destination?.[property])}
              update={(path, value) => update(path, value === '' && !REQUIRED_TEXT.has(property) ? undefined : value)}
              multiline={multiline}
            />
          );
          const number = (property: string, label: string, min: number, max: number) => (
            <NumberField label={label} {...bound([...base, property], destination?.[property])} min={min} max={max} />
          );
          return (
            <fieldset key={index} className="rule" id={fieldId(base.join('.'))} tabIndex={-1}>
              <legend>{name}</legend>
              <ItemControls
                afterRemove="sec-destinations"
                listPath={['destinations']}
                index={index}
                count={destinations.length}
                name={name}
                items={destinations}
                update={update}
                labels={{ up: t('dest.up'), down: t('dest.down'), remove: t('dest.remove') }}
              />
              <FieldIssues issues={issues} path={base.join('.')} />
              <div className="grid compact">
                {text('key', t('dest.key'))}
                <SelectField
                  label={t('dest.type')}
                  {...bound([...base, 'type'], type)}
                  update={(_path, next) => update(base, retypeDestination(destination, next as DestinationType))}
                  options={DESTINATION_TYPES.map((value): [string, string] => [value, value])}
                />
                {type === 'http' && (
                  <SelectField
                    label={t('dest.method')}
                    {...bound([...base, 'method'], destination?.method ?? 'POST')}
                    options={HTTP_METHODS.map((value): [string, string] => [value, value])}
                  />
                )}
                {type === 'function' && text('function', t('dest.function'))}
                {type === 'llm' && text('model', t('dest.model'))}
                {type === 'agent' && (
                  <SelectField
                    label={t('dest.mode')}
                    {...bound([...base, 'mode'], destination?.mode ?? 'sync')}
                    options={AGENT_MODES.map((value): [string, string] => [value, value])}
                  />
                )}
                {type === 'llm' && number('maxTokens', t('dest.maxTokens'), limits.LLM_MAX_TOKENS_MIN, limits.LLM_MAX_TOKENS_MAX)}
                {type === 'llm' && number('temperature', t('dest.temperature'), 0, limits.LLM_TEMPERATURE_MAX)}
                {(type === 'llm' || type === 'agent') &&
                  number('timeoutMs', t('dest.timeoutMs'), limits.DESTINATION_TIMEOUT_MIN_MS, limits.DESTINATION_TIMEOUT_MAX_MS)}
              </div>
              {hasUrl(type) && text('url', t('dest.url'))}
              {hasUrl(type) && typeof destination?.url === 'string' && /^http:\/\//i.test(destination.url.trim()) && (
                <p className="issue warn">{t('ed.webhookHttps')}</p>
              )}
              {text('description', t('dest.description'))}
              {type === 'reply' && text('text', t('dest.text'), true)}
              {type === 'reply' && (
                <StringList
                  path={[...base, 'buttons']}
                  values={destination?.buttons}
                  itemLabel={(n) => t('dest.button', { n })}
                  title={t('dest.buttons')}
                  max={limits.REPLY_BUTTONS_MAX}
                  issues={issues}
                  update={update}
                />
              )}
              {type === 'llm' && text('prompt', t('dest.prompt'), true)}
              {type === 'llm' && text('input', t('dest.input'), true)}
              {type === 'agent' && text('instructions', t('dest.instructions'), true)}
              {type === 'agent' && (
                <StringList
                  path={[...base, 'tools']}
                  values={destination?.tools}
                  itemLabel={(n) => t('dest.tool', { n })}
                  title={t('dest.tools')}
                  max={limits.AGENT_TOOLS_MAX}
                  issues={issues}
                  update={update}
                />
              )}
              {type === 'http' && text('body', t('dest.body'), true)}
              {['reply', 'llm', 'agent', 'http'].includes(type) && (
                <p className="muted small">{placeholders.length > 0 ? t('dest.placeholders', { list: placeholders.join(', ') }) : t('dest.noPlaceholders')}</p>
              )}
              <h3>{t('dest.when')}</h3>
              {when.length === 0 && <p className="muted small">{t('dest.always')}</p>}
              <ConditionList
                path={[...base, 'when']}
                conditions={when}
                operands={operands}
                issues={issues}
                update={update}
                max={limits.DESTINATION_CONDITIONS_MAX}
                legend={(n) => t('cond.n', { n: n + 1 })}
                addLabel={t('cond.addTo', { owner: name })}
              />
              <Params path={[...base, 'params']} params={destination?.params} issues={issues} update={update} owner={name} source={freshParamSource(doc)} />
              {takesHeaders(type) && <Headers path={[...base, 'headers']} headers={destination?.headers} issues={issues} update={update} owner={name} />}
            </fieldset>
          );
        }}
      </SortableList>
      <div className="actions">
        <button
          type="button"
          disabled={destinations.length >= limits.DESTINATIONS_MAX}
          onClick={() => {
            const key = freshKey(
              'destination',
              destinations.map((destination) => destination?.key),
            );
            markFresh(`destinations.${destinations.length}`);
            update(['destinations'], [...destinations, { key, type: 'webhook', url: '' }]);
            focusSoon(fieldId(`destinations.${destinations.length}.key`));
          }}
        >
          {t('dest.add')}
        </button>
      </div>
    </section>
  );
}

const REQUIRED_TEXT = new Set(['key', 'url', 'text', 'function', 'prompt']);

function StringList({
  path,
  values,
  title,
  itemLabel,
  max,
  issues,
  update,
}: {
  path: Path;
  values: unknown;
  title: string;
  itemLabel: (n: number) => string;
  max: number;
  issues: SchemaIssue[];
  update: Update;
}) {
  const { t } = useApp();
  const list: unknown[] = Array.isArray(values) ? values : [];
  const dotted = path.join('.');
  return (
    <div className="rows">
      <h3>{title}</h3>
      <FieldIssues issues={issues} path={dotted} />
      {list.map((value, i) => (
        <div key={i} className="row inline">
          <TextField label={itemLabel(i + 1)} path={[...path, i]} issues={issues} value={value} update={update} />
          <button type="button" className="link" onClick={() => update(path, list.length === 1 ? undefined : removeItem(list, i))}>
            {t('dest.itemRemove')} <span className="visually-hidden">{itemLabel(i + 1)}</span>
          </button>
        </div>
      ))}
      {list.length < max && (
        <button
          type="button"
          onClick={() => {
            update(path, [...list, '']);
            focusSoon(fieldId(`${dotted}.${list.length}`));
          }}
        >
          {t('dest.itemAdd')} <span className="visually-hidden">{title}</span>
        </button>
      )}
    </div>
  );
}

/** A map edited as rows whose first control renames the entry (headers, params); the order is kept. */
function MapRows<T>({
  path,
  map,
  stem,
  fresh,
  max,
  title,
  hint,
  addLabel,
  issues,
  update,
  row,
}: {
  path: Path;
  map: unknown;
  stem: string;
  fresh: T;
  max: number;
  title: string;
  hint?: string;
  addLabel: string;
  issues: SchemaIssue[];
  update: Update;
  row: (name: string, value: T, rename: (to: string) => void) => ReactNode;
}) {
  const entries: Array<[string, T]> = map && typeof map === 'object' && !Array.isArray(map) ? Object.entries(map as Record<string, T>) : [];
  const current = Object.fromEntries(entries) as Record<string, T>;
  return (
    <div className="rows">
      <h3>{title}</h3>
      {hint && <p className="muted small">{hint}</p>}
      <FieldIssues issues={issues} path={path.join('.')} />
      {entries.map(([name, value], i) => (
        <div key={i} className="entry">
          {row(name, value, (to) => update(path, renameKey(current, name, to)))}
        </div>
      ))}
      {entries.length < max && (
        <button
          type="button"
          onClick={() => {
            const name = freshKey(stem, Object.keys(current));
            update(path, { ...current, [name]: fresh });
            focusSoon(fieldId(`${path.join('.')}.${name}`));
          }}
        >
          {addLabel}
        </button>
      )}
    </div>
  );
}

function NameInput({
  label,
  path,
  name,
  issues,
  onRename,
  idSuffix = '',
}: {
  label: string;
  path: Path;
  name: string;
  issues: SchemaIssue[];
  onRename: (to: string) => void;
  idSuffix?: string;
}) {
  const dotted = [...path, name].join('.');
  return (
    <label className="field">
      <span>{label}</span>
      <input id={`${fieldId(dotted)}${idSuffix}`} value={name} onChange={(event) => onRename(event.target.value)} {...describedBy(issues, dotted)} />
      <FieldIssues issues={issues} path={dotted} />
    </label>
  );
}

function Headers({ path, headers, issues, update, owner }: { path: Path; headers: unknown; issues: SchemaIssue[]; update: Update; owner: string }) {
  const { t } = useApp();
  return (
    <MapRows<string>
      path={path}
      map={headers}
      stem="X-Header"
      fresh=""
      max={limits.HEADERS_MAX}
      title={t('dest.headers')}
      hint={t('dest.headerHint')}
      addLabel={t('dest.headerAddTo', { owner })}
      issues={issues}
      update={(at, value) => update(at, value && typeof value === 'object' && Object.keys(value).length === 0 ? undefined : value)}
      row={(name, value, rename) => (
        <>
          <NameInput label={t('dest.headerName')} path={path} name={name} issues={[]} onRename={rename} idSuffix="-name" />
          <TextField label={t('dest.headerValue')} path={[...path, name]} issues={issues} value={value} update={update} />
          <RemoveEntry label={t('dest.headerRemove')} name={name} onRemove={() => update(path, withoutKey(headers, name))} />
        </>
      )}
    />
  );
}

function Params({
  path,
  params,
  issues,
  update,
  owner,
  source,
}: {
  path: Path;
  params: unknown;
  issues: SchemaIssue[];
  update: Update;
  owner: string;
  source: string;
}) {
  const bound = fieldBinding(issues, update);
  const { t } = useApp();
  return (
    <MapRows<Json>
      path={path}
      map={params}
      stem="param"
      fresh={{ from: source }}
      max={limits.PARAMS_MAX}
      title={t('dest.params')}
      addLabel={t('dest.paramAddTo', { owner })}
      issues={issues}
      update={update}
      row={(name, spec, rename) => {
        const at = [...path, name];
        const fixed = spec && typeof spec === 'object' && 'value' in spec && !('from' in spec);
        return (
          <>
            <NameInput label={t('dest.paramName')} path={path} name={name} issues={issues} onRename={rename} />
            <SelectField
              label={t('dest.paramSource')}
              {...bound([...at, 'kind'], fixed ? 'value' : 'from')}
              update={(_p, kind) => update(at, kind === 'value' ? { value: '' } : { from: source })}
              options={[
                ['from', t('dest.paramFrom')],
                ['value', t('dest.paramFixed')],
              ]}
            />
            {fixed ? (
              <TextField label={t('dest.paramValue')} {...bound([...at, 'value'], spec.value)} />
            ) : (
              <>
                <label className="field">
                  <span>{t('dest.paramFromPath')}</span>
                  <input
                    id={fieldId([...at, 'from'].join('.'))}
                    list="param-sources"
                    value={typeof spec?.from === 'string' ? spec.from : ''}
                    onChange={(event) => update([...at, 'from'], event.target.value)}
                    {...describedBy(issues, [...at, 'from'].join('.'))}
                  />
                  <FieldIssues issues={issues} path={[...at, 'from'].join('.')} />
                </label>
                <CheckField
                  label={`${t('dest.paramRequired')}`}
                  path={[...at, 'required']}
                  value={spec?.required}
                  update={(p, value) => update(p, value === true ? true : undefined)}
                />
              </>
            )}
            <RemoveEntry label={t('dest.paramRemove')} name={name} onRemove={() => update(path, withoutKey(params, name))} />
          </>
        );
      }}
    />
  );
}

function RemoveEntry({ label, name, onRemove }: { label: string; name: string; onRemove: () => void }) {
  return (
    <button type="button" className="link" onClick={onRemove}>
      {label} <span className="visually-hidden">{name}</span>
    </button>
  );
}

function withoutKey(map: unknown, name: string): Record<string, unknown> | undefined {
  const next = { ...(map as Record<string, unknown>) };
  delete next[name];
  return Object.keys(next).length === 0 ? undefined : next;
}

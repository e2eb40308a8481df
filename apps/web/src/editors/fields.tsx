import { createContext, ReactNode } from 'react';
import type { SchemaIssue } from '@ds/decision-schema';
import { fieldId, issuesAt } from '../lib/issues';
import type { Confirmation } from '../lib/editor-state';

// The form's controls: each edits one path of the draft through `update`, carries the id an issue links to, and
// shows the validator's issues for its path beside it.

/** Sets `value` at `path`; `rewrite`, when given, then adjusts the whole draft within the same undo step. */
export type Update = (path: Array<string | number>, value: unknown, rewrite?: (doc: any) => any) => void;

/** What the form asks of the editor around it: confirming a change that discards content. */
export interface EditorHelpers {
  ask(request: Confirmation): void;
  /** An item just added: its issues wait until the author edits it or tries to save. */
  markFresh(path: string): void;
}
export const EditorContext = createContext<EditorHelpers>({ ask: () => undefined, markFresh: () => undefined });

/** Messages for one control, linked to it with aria-describedby. */
export function FieldIssues({ issues, path }: { issues: SchemaIssue[]; path: string }) {
  const here = issuesAt(issues, path);
  if (here.length === 0) return null;
  return (
    <span id={`${fieldId(path)}-issues`} className="issue">
      {here.map((issue) => issue.message).join('; ')}
    </span>
  );
}

export function describedBy(issues: SchemaIssue[], path: string) {
  return issuesAt(issues, path).length > 0 ? { 'aria-invalid': true, 'aria-describedby': `${fieldId(path)}-issues` } : {};
}

/** The props a control takes from the form around it: `field(path, value)` adds the form's issues and update. */
export function fieldBinding(issues: SchemaIssue[], update: Update) {
  return (path: Array<string | number>, value: unknown) => ({ path, value, issues, update });
}

export interface FieldProps {
  label: string;
  path: Array<string | number>;
  issues: SchemaIssue[];
  children?: ReactNode;
}

export function TextField({
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

export function NumberField({
  label,
  path,
  issues,
  value,
  update,
  step,
  min,
  max,
}: FieldProps & { value: unknown; update: Update; step?: string; min?: number; max?: number }) {
  const dotted = path.join('.');
  return (
    <label className="field">
      <span>{label}</span>
      <input
        id={fieldId(dotted)}
        type="number"
        step={step ?? 'any'}
        min={min}
        max={max}
        value={typeof value === 'number' ? value : ''}
        onChange={(event) => update(path, event.target.value === '' ? undefined : Number(event.target.value))}
        {...describedBy(issues, dotted)}
      />
      <FieldIssues issues={issues} path={dotted} />
    </label>
  );
}

export function SelectField({
  label,
  path,
  issues,
  value,
  update,
  options,
}: FieldProps & { value: unknown; update: Update; options: Array<[string, string]> }) {
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

export function CheckField({ label, path, value, update }: { label: string; path: Array<string | number>; value: unknown; update: Update }) {
  return (
    <label className="check">
      <input id={fieldId(path.join('.'))} type="checkbox" checked={value === true} onChange={(event) => update(path, event.target.checked)} />
      <span>{label}</span>
    </label>
  );
}

import { useContext, useState } from 'react';
import type { SchemaIssue } from '@ds/decision-schema';
import { useApp } from '../context';
import { fieldId, issuesAt } from '../lib/issues';
import type { MessageKey } from '../lib/i18n';
import { conditionFor, newCondition, Operand, operandId, operatorsFor } from '@ds/decision-schema';
import { moveItem, removeItem } from '../lib/lists';
import { EditorContext, fieldBinding, FieldIssues, NumberField, SelectField, Update } from './fields';
import { DragHandle, useSortableList } from './sortable';
import { ConfirmDialog } from '../ui';

type Json = any;
type Path = Array<string | number>;

const dotted = (path: Path) => path.join('.');

/** Focuses an element once React has drawn it (a moved or added item's control). */
export function focusSoon(id: string): void {
  setTimeout(() => document.getElementById(id)?.focus(), 0);
}

/**
 * Up, down and remove for one item of an ordered list, keyboard-usable buttons named with the item. After a move
 * the focus follows the item to its new place, so repeated presses keep moving it. Inside a sortable list the
 * item's drag grip comes first, and moves are announced.
 */
export function ItemControls({
  listPath,
  index,
  count,
  name,
  labels,
  update,
  items,
  afterRemove,
  confirmRemoval,
}: {
  listPath: Path;
  index: number;
  count: number;
  name: string;
  labels: { up?: string; down?: string; remove: string };
  update: Update;
  items: readonly Json[];
  /** Where the focus goes once the item (and the button pressed) is gone. */
  afterRemove: string;
  /** Asked before removing an item whose loss is more than a line (a question, with what refers to it). */
  confirmRemoval?: { title: string; body: string; confirm: string };
}) {
  const [confirming, setConfirming] = useState(false);
  const id = fieldId(dotted([...listPath, index]));
  const list = useSortableList();
  const move = (to: number) => {
    update(listPath, moveItem(items, index, to));
    list?.announce(index, to);
    // The same direction again, unless the item reached the end where that button is disabled.
    const direction = to < index ? (to === 0 ? 'down' : 'up') : to === count - 1 ? 'up' : 'down';
    focusSoon(`${fieldId(dotted([...listPath, to]))}-${direction}`);
  };
  return (
    <div className="actions">
      <DragHandle />
      {labels.up && (
        <button type="button" id={`${id}-up`} disabled={index === 0} onClick={() => move(index - 1)}>
          {labels.up} <span className="visually-hidden">{name}</span>
        </button>
      )}
      {labels.down && (
        <button type="button" id={`${id}-down`} disabled={index === count - 1} onClick={() => move(index + 1)}>
          {labels.down} <span className="visually-hidden">{name}</span>
        </button>
      )}
      <button
        type="button"
        className="link"
        onClick={() => {
          if (confirmRemoval) {
            setConfirming(true);
            return;
          }
          update(listPath, removeItem(items, index));
          focusSoon(afterRemove);
        }}
      >
        {labels.remove} <span className="visually-hidden">{name}</span>
      </button>
      {confirming && confirmRemoval && (
        <ConfirmDialog
          title={confirmRemoval.title}
          confirmLabel={confirmRemoval.confirm}
          danger
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            update(listPath, removeItem(items, index));
            focusSoon(afterRemove);
          }}
        >
          <p>{confirmRemoval.body}</p>
        </ConfirmDialog>
      )}
    </div>
  );
}

/** The words for an operand in the operand select. */
export function operandLabel(operand: Operand, t: ReturnType<typeof useApp>['t']): string {
  return operand.on === 'action' ? t('cond.action') : t(`cond.${operand.on}` as MessageKey, { key: operand.ref ?? '' });
}

/**
 * One condition: what it compares (only operands the draft has), an operator that fits it, and a value typed by
 * it (an option, level or action from a list; a number within its range otherwise).
 */
export function ConditionEditor({
  path,
  condition,
  operands,
  issues,
  update,
  legend,
  onRemove,
}: {
  path: Path;
  condition: Json;
  operands: Operand[];
  issues: SchemaIssue[];
  update: Update;
  legend: string;
  onRemove?: () => void;
}) {
  const bound = fieldBinding(issues, update);
  const { t } = useApp();
  const base = dotted(path);
  const currentId = operandId(condition);
  const operand = operands.find((candidate) => candidate.id === currentId);
  const refField = condition?.on === 'composite' ? 'composite' : condition?.on === 'action' ? 'on' : 'question';
  const operandPaths = ['on', 'question', 'composite'].map((part) => `${base}.${part}`);
  const operandIssues = operandPaths.filter((candidate) => issuesAt(issues, candidate).length > 0);
  const choices: Array<[string, string]> = operands.map((candidate) => [candidate.id, operandLabel(candidate, t)]);
  if (!operand) choices.unshift([currentId, t('cond.unknown', { name: condition?.question ?? condition?.composite ?? condition?.on ?? '?' })]);
  const useThreshold = operand?.hasThreshold === true && condition?.value === 'threshold';
  return (
    <fieldset className="condition" id={fieldId(base)} tabIndex={-1}>
      <legend>{legend}</legend>
      <div className="grid compact">
        <label className="field">
          <span>{t('cond.operand')}</span>
          <select
            id={fieldId(`${base}.${refField}`)}
            value={currentId}
            onChange={(event) => {
              const chosen = operands.find((candidate) => candidate.id === event.target.value);
              if (chosen) update(path, conditionFor(chosen, condition));
            }}
            {...(operandIssues.length > 0
              ? { 'aria-invalid': true, 'aria-describedby': operandIssues.map((candidate) => `${fieldId(candidate)}-issues`).join(' ') }
              : {})}
          >
            {choices.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
          {operandPaths.map((candidate) => (
            <FieldIssues key={candidate} issues={issues} path={candidate} />
          ))}
        </label>
        <SelectField
          label={t('cond.op')}
          {...bound([...path, 'op'], condition?.op)}
          options={(operand ? operatorsFor(operand.kind) : (['eq', 'neq', 'gt', 'gte', 'lt', 'lte'] as const)).map((op): [string, string] => [
            op,
            t(`op.${op}` as MessageKey),
          ])}
        />
        {operand?.values ? (
          <SelectField
            label={t('cond.value')}
            {...bound([...path, 'value'], condition?.value)}
            options={[
              ...(operand.values.includes(condition?.value)
                ? []
                : ([[typeof condition?.value === 'string' ? condition.value : '', '—']] as Array<[string, string]>)),
              ...operand.values.map((value): [string, string] => [value, value]),
            ]}
          />
        ) : useThreshold ? (
          <p className="field">
            <span>{t('cond.value')}</span>
            <code id={fieldId(`${base}.value`)} tabIndex={-1}>
              threshold
            </code>
          </p>
        ) : (
          <div>
            <NumberField
              label={t('cond.value')}
              {...bound([...path, 'value'], condition?.value)}
              min={operand?.min}
              max={operand?.max}
              step={operand?.kind === 'weighted' ? '0.5' : '0.05'}
            />
            {operand && operand.min !== undefined && <small className="muted">{t('cond.range', { min: operand.min, max: operand.max ?? '' })}</small>}
          </div>
        )}
      </div>
      {operand?.hasThreshold && (
        <label className="check">
          <input type="checkbox" checked={useThreshold} onChange={(event) => update([...path, 'value'], event.target.checked ? 'threshold' : 0.5)} />
          <span>{t('cond.useThreshold')}</span>
        </label>
      )}
      {onRemove && (
        <button type="button" className="link" onClick={onRemove}>
          {t('cond.remove')} <span className="visually-hidden">{legend}</span>
        </button>
      )}
    </fieldset>
  );
}

/** A list of conditions (a rule's extra ones, a destination's `when`), each removable, added up to `max`. */
export function ConditionList({
  path,
  conditions,
  operands,
  issues,
  update,
  max,
  legend,
  addLabel,
  maxText,
}: {
  path: Path;
  conditions: Json[];
  operands: Operand[];
  issues: SchemaIssue[];
  update: Update;
  max: number;
  legend: (index: number) => string;
  addLabel: string;
  /** What the list says once full, when "At most {max} conditions." would miscount (a rule's `when` is not in it). */
  maxText?: string;
}) {
  const { t } = useApp();
  const { markFresh } = useContext(EditorContext);
  return (
    <div className="rows">
      <FieldIssues issues={issues} path={dotted(path)} />
      {conditions.map((condition, index) => (
        <ConditionEditor
          key={index}
          path={[...path, index]}
          condition={condition}
          operands={operands}
          issues={issues}
          update={update}
          legend={legend(index)}
          onRemove={() => {
            update(path, conditions.length === 1 ? undefined : removeItem(conditions, index));
            focusSoon(fieldId(dotted(path.slice(0, -1))));
          }}
        />
      ))}
      {conditions.length < max ? (
        <button
          type="button"
          disabled={operands.length === 0}
          onClick={() => {
            markFresh(dotted([...path, conditions.length]));
            update(path, [...conditions, newCondition(operands)]);
            focusSoon(fieldId(dotted([...path, conditions.length, 'op'])));
          }}
        >
          {addLabel}
        </button>
      ) : (
        <p className="muted small">{maxText ?? t('cond.max', { max })}</p>
      )}
    </div>
  );
}

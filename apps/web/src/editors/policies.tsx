import { useCallback, useContext } from 'react';
import { ACTIONS, limits, newCondition, operandsOf, SchemaIssue } from '@ds/decision-schema';
import { useApp } from '../context';
import { fieldId } from '../lib/issues';
import { moveItem } from '../lib/lists';
import { EditorContext, fieldBinding, FieldIssues, SelectField, Update } from './fields';
import { ConditionEditor, ConditionList, focusSoon, ItemControls } from './parts';
import { SortableList } from './sortable';

type Json = any;

/**
 * Policy rules in order (first match wins): each a `when` condition, up to five more that must all hold, and the
 * action; then the fallback action the schema applies when answers are unusable.
 */
export function PoliciesEditor({ doc, issues, update }: { doc: Json; issues: SchemaIssue[]; update: Update }) {
  const bound = fieldBinding(issues, update);
  const { t } = useApp();
  const { markFresh } = useContext(EditorContext);
  const policies: Json[] = Array.isArray(doc.policies) ? doc.policies : [];
  const operands = operandsOf(doc, false);
  const ruleName = useCallback((index: number) => t('rule.n', { n: index + 1 }), [t]);
  return (
    <section className="card" aria-labelledby="sec-policies">
      <h2 tabIndex={-1} id="sec-policies">
        {t('ed.policies')}
      </h2>
      <p className="muted small">{t('rule.lead')}</p>
      <FieldIssues issues={issues} path="policies" />
      {policies.length === 0 && <p className="muted">{t('rule.none')}</p>}
      <SortableList
        count={policies.length}
        nameOf={ruleName}
        onMove={(from, to) => {
          update(['policies'], moveItem(policies, from, to));
        }}
      >
        {(index) => {
          const policy = policies[index];
          const base = ['policies', index];
          const and: Json[] = Array.isArray(policy?.and) ? policy.and : [];
          const name = ruleName(index);
          return (
            <fieldset className="rule" id={fieldId(base.join('.'))} tabIndex={-1}>
              <legend>{name}</legend>
              <ItemControls
                afterRemove="sec-policies"
                listPath={['policies']}
                index={index}
                count={policies.length}
                name={name}
                items={policies}
                update={update}
                labels={{ up: t('rule.up'), down: t('rule.down'), remove: t('rule.remove') }}
              />
              <FieldIssues issues={issues} path={base.join('.')} />
              <ConditionEditor
                path={[...base, 'when']}
                condition={policy?.when}
                operands={operands}
                issues={issues}
                update={update}
                legend={t('rule.when')}
                // The rule needs its `when`: removing it promotes the first extra condition.
                onRemove={and.length > 0 ? () => update(base, { ...policy, when: and[0], and: and.length > 1 ? and.slice(1) : undefined }) : undefined}
              />
              <ConditionList
                path={[...base, 'and']}
                conditions={and}
                operands={operands}
                issues={issues}
                update={update}
                max={limits.POLICY_AND_MAX}
                legend={(n) => `${t('rule.and')} (${t('cond.n', { n: n + 2 })})`}
                addLabel={t('cond.addTo', { owner: name })}
                maxText={t('rule.andMax', { max: limits.POLICY_AND_MAX })}
              />
              <SelectField
                label={t('rule.action')}
                {...bound([...base, 'action'], policy?.action)}
                options={ACTIONS.map((action): [string, string] => [action, action])}
              />
            </fieldset>
          );
        }}
      </SortableList>
      {operands.length === 0 && <p className="muted small">{t('cond.noOperand')}</p>}
      {policies.length >= limits.POLICIES_MAX && <p className="muted small">{t('rule.max', { max: limits.POLICIES_MAX })}</p>}
      <div className="actions">
        <button
          type="button"
          disabled={operands.length === 0 || policies.length >= limits.POLICIES_MAX}
          onClick={() => {
            markFresh(`policies.${policies.length}`);
            update(['policies'], [...policies, { when: newCondition(operands), action: 'escalate' }]);
            focusSoon(`${fieldId(`policies.${policies.length}`)}`);
          }}
        >
          {t('rule.add')}
        </button>
      </div>
      <SelectField
        label={t('ed.fallbackAction')}
        {...bound(['fallbackAction'], doc.fallbackAction)}
        options={[['', '—'], ...ACTIONS.map((a): [string, string] => [a, a])]}
      />
    </section>
  );
}

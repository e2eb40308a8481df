import { ACTIONS, SchemaIssue } from '@ds/decision-schema';
import { useApp } from '../context';
import { CheckField, fieldBinding, FieldIssues, NumberField, Update } from './fields';

type Json = any;

/** What turning review on starts from: escalations and low confidence to people, 2 % of the rest audited. */
const REVIEW_STARTING_POINT = { when: { actions: ['escalate'], lowConfidence: true, engineError: false }, auditRate: 0.02, dueMinutes: 240 };

/** `settings.review`: which runs people look at (docs/reviews.md). Absent means no review. */
export function ReviewSettingsEditor({ review, issues, update }: { review: Json; issues: SchemaIssue[]; update: Update }) {
  const { t } = useApp();
  const bound = fieldBinding(issues, update);
  const on = typeof review === 'object' && review !== null && !Array.isArray(review);
  const when = on && typeof review.when === 'object' && review.when !== null ? review.when : {};
  const actions: string[] = Array.isArray(when.actions) ? when.actions : [];
  return (
    <fieldset className="review-settings">
      <legend>{t('ed.review')}</legend>
      <CheckField
        label={t('ed.review.on')}
        path={['settings', 'review']}
        value={on}
        update={(path, checked) => update(path, checked ? REVIEW_STARTING_POINT : undefined)}
      />
      {on && (
        <div className="grid">
          <fieldset>
            <legend>{t('ed.review.actions')}</legend>
            {ACTIONS.map((action) => (
              <CheckField
                key={action}
                label={action}
                path={['settings', 'review', 'when', 'actions', action]}
                value={actions.includes(action)}
                update={(_path, checked) =>
                  update(
                    ['settings', 'review', 'when', 'actions'],
                    checked ? [...actions.filter((name) => name !== action), action] : actions.filter((name) => name !== action),
                  )
                }
              />
            ))}
          </fieldset>
          <CheckField label={t('ed.review.lowConfidence')} path={['settings', 'review', 'when', 'lowConfidence']} value={when.lowConfidence} update={update} />
          <CheckField label={t('ed.review.engineError')} path={['settings', 'review', 'when', 'engineError']} value={when.engineError} update={update} />
          <NumberField label={t('ed.review.auditRate')} {...bound(['settings', 'review', 'auditRate'], review.auditRate)} step="0.01" min={0} max={1} />
          <NumberField label={t('ed.review.dueMinutes')} {...bound(['settings', 'review', 'dueMinutes'], review.dueMinutes)} step="1" min={1} />
        </div>
      )}
      <FieldIssues issues={issues} path="settings.review" />
    </fieldset>
  );
}

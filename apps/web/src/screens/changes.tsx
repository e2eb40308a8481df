import { Fragment, useId } from 'react';
import type { BreakingChange, Change, MissingSecret, ReviewItem, VersionReview } from '@ds/decision-schema';
import type { MessageKey } from '../lib/i18n';
import { useApp } from '../context';
import { Link } from '../router';

/** A list of JSON changes (added, removed, changed at a path), as the history's list shows contract changes. */
export function ChangeList({ changes }: { changes: Change[] }) {
  const { t } = useApp();
  return (
    <ul className="diff">
      {changes.map((change) => (
        <li key={change.path} className={`diff-${change.kind}`}>
          <span className="badge">{t(`dep.${change.kind}`)}</span> <code>{change.path}</code>
          {change.kind === 'changed' && (
            <>
              : <del>{JSON.stringify(change.before)}</del> → <ins>{JSON.stringify(change.after)}</ins>
            </>
          )}
          {change.kind === 'added' && (
            <>
              {' '}
              <ins>{JSON.stringify(change.after)}</ins>
            </>
          )}
          {change.kind === 'removed' && (
            <>
              {' '}
              <del>{JSON.stringify(change.before)}</del>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

/** A review's sentence, with the keys it quotes in `backticks` shown as code. */
function Words({ text }: { text: string }) {
  const parts = text.split('`');
  return (
    <>
      {parts.map((part, i) => (
        <Fragment key={i}>{i % 2 === 1 ? <code>{part}</code> : part}</Fragment>
      ))}
    </>
  );
}

/**
 * What a deploy, a rollback or a comparison changes, area by area in the editor's words (a rule inserted at the
 * top is one rule added); a first version says what it holds.
 */
export function ReviewView({ review, headingLevel = 3 }: { review: VersionReview; headingLevel?: 3 | 4 }) {
  const { t } = useApp();
  const Heading = headingLevel === 3 ? 'h3' : 'h4';
  if (review.first) return <p data-testid="review-summary">{t('review.first', { summary: review.summary })}</p>;
  if (review.changes === 0) return <p data-testid="review-summary">{t('review.none')}</p>;
  return (
    <div className="review" data-testid="review">
      <p className="muted" data-testid="review-summary">
        {review.changes === 1 ? t('review.oneChange') : t('review.nChanges', { count: review.changes })}
      </p>
      {review.areas.map((group) => (
        <section key={group.area} aria-label={t(`review.area.${group.area}`)}>
          <Heading>{t(`review.area.${group.area}`)}</Heading>
          <ul className="diff">
            {group.items.map((item, i) => (
              <ReviewLine key={i} item={item} />
            ))}
          </ul>
        </section>
      ))}
    </div>
  );
}

function ReviewLine({ item }: { item: ReviewItem }) {
  const { t } = useApp();
  return (
    <li className={`diff-${item.kind}`}>
      <span className="badge">{t(`dep.${item.kind}`)}</span>{' '}
      {item.breaking && (
        <>
          <span className="badge error">{t('review.breaking')}</span>{' '}
        </>
      )}
      <Words text={item.text} />
    </li>
  );
}

/** Headers that name a secret the workspace does not have: the call would leave without it, so it is not made. */
export function MissingSecretsNote({ missing }: { missing: MissingSecret[] | null }) {
  const { t } = useApp();
  const titleId = useId();
  if (missing === null) return <p className="muted small">{t('review.secretsUnknown')}</p>;
  if (missing.length === 0) return null;
  return (
    <div className="breaking" role="note" aria-labelledby={titleId} data-testid="missing-secrets">
      <p id={titleId}>
        <span className="badge error">{t('review.missingSecrets')}</span> {t('review.missingSecretsLead')} <Link href="/secrets">{t('nav.secrets')}</Link>.
      </p>
      <ul>
        {missing.map((entry) => (
          <li key={`${entry.destination}/${entry.header}/${entry.secret}`}>
            {t('review.missingSecret', { destination: entry.destination, header: entry.header, secret: entry.secret })}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The changes that break callers, each said in words. */
export function BreakingList({
  changes,
  title = 'dep.breaking',
  lead = 'dep.breakingLead',
}: {
  changes: BreakingChange[];
  title?: MessageKey;
  lead?: MessageKey;
}) {
  const { t } = useApp();
  const titleId = useId();
  return (
    <div className="breaking" role="note" aria-labelledby={titleId}>
      <p id={titleId}>
        <span className="badge error">{t(title)}</span> {t(lead)}
      </p>
      <ul>
        {changes.map((change, i) => (
          <li key={i}>{t(`dep.break.${change.kind}`, { subject: change.subject, values: (change.values ?? []).join(', ') })}</li>
        ))}
      </ul>
    </div>
  );
}

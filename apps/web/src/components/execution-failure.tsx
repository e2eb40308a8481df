import { useApp } from '../context';
import { FailureDetail, recordedFailure } from '../lib/failures';
import type { MessageKey } from '../lib/i18n';

/**
 * A failed run read as a record rather than as the application's own failure: what the code means and whose
 * move it is, the message the caller received, each issue with the place it concerns, and what to do.
 */
export function ExecutionFailure({ error }: { error: unknown }) {
  const { t } = useApp();
  const failure = recordedFailure(error);
  const title = failure.known ? t(`fail.title.${failure.known}` as MessageKey) : t('fail.title.other', { code: failure.code });
  const advice = failure.known ? t(`fail.advice.${failure.known}` as MessageKey) : t('fail.advice.other');
  return (
    <section className="card stack failure-record" aria-labelledby="failure-heading" data-testid="execution-failure">
      <h2 id="failure-heading">{t('fail.heading')}</h2>
      <p>
        <strong>{title}</strong>
      </p>
      <p className="muted small">{t('fail.lead')}</p>
      <dl className="facts">
        <dt>{t('fail.code')}</dt>
        <dd>
          <code>{failure.code}</code>
        </dd>
        <dt>{t('fail.whose')}</dt>
        <dd>{t(`fail.party.${failure.party}`)}</dd>
        {failure.message !== '' && (
          <>
            <dt>{t('fail.message')}</dt>
            <dd>{failure.message}</dd>
          </>
        )}
      </dl>
      {failure.details.length > 0 && (
        <>
          <h3>{t('fail.details')}</h3>
          <ul className="plain-list failure-details">
            {failure.details.map((detail, index) => (
              <li key={index}>
                <IssueLine detail={detail} whole={t('fail.whole')} />
              </li>
            ))}
          </ul>
        </>
      )}
      {failure.facts.length > 0 && (
        <>
          <h3>{t('fail.facts')}</h3>
          <ul className="plain-list">
            {failure.facts.map(([name, value], index) => (
              <li key={index}>{name ? `${name}: ${value}` : value}</li>
            ))}
          </ul>
        </>
      )}
      <h3>{t('fail.todo')}</h3>
      <p>{advice}</p>
      {failure.retryable !== null && <p className="muted small">{t(failure.retryable ? 'fail.retry.yes' : 'fail.retry.no')}</p>}
    </section>
  );
}

/** "state.plan must be one of free, pro" with its path set apart; a message about the state as a whole says so. */
function IssueLine({ detail, whole }: { detail: FailureDetail; whole: string }) {
  if (detail.path !== '' && detail.path !== 'state' && detail.message.startsWith(`${detail.path} `)) {
    return (
      <>
        <code>{detail.path}</code>
        {detail.message.slice(detail.path.length)}
      </>
    );
  }
  return (
    <>
      {detail.path === '' || detail.path === 'state' ? whole : <code>{detail.path}</code>}: {detail.message}
    </>
  );
}

import { useMemo, useState } from 'react';
import { reviewVersions } from '@ds/decision-schema';
import { api, DecisionDetails, DeployedReply, ReviewReply } from '../lib/api';

import { normalizedOf, sameJson } from '../lib/drafts';
import { may, useApp } from '../context';
import { Link } from '../router';
import { DECISION_VIEWS, decisionView, offersView } from '../lib/access';
import { ConfirmDialog, Loaded, Outcome, Page, useAction, useLoad } from '../ui';
import { useScrollStrip } from '../components/scroll-strip';
import { lazyScreen, ScreenSlot } from '../components/lazy-screen';
import { BreakingList, MissingSecretsNote, ReviewView } from './changes';

// A tab's code is fetched when the tab is first opened: the charts come with Overview and Quality, CodeMirror and
// drag and drop with the editor.
const Overview = lazyScreen(() => import('./overview'), 'Overview');
const Quality = lazyScreen(() => import('./quality'), 'Quality');
const Editor = lazyScreen(() => import('./editor'), 'Editor');
const Playground = lazyScreen(() => import('./playground'), 'Playground');
const ExecutionsTable = lazyScreen(() => import('./execution-list'), 'ExecutionsTable');
const DeliveriesTable = lazyScreen(() => import('./deliveries'), 'DeliveriesTable');
const SecretUrl = lazyScreen(() => import('./secret-url'), 'SecretUrl');
const History = lazyScreen(() => import('./history'), 'History');
const Replay = lazyScreen(() => import('./replay'), 'Replay');

export function DecisionPage({ id, view }: { id: string; view: string }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const [value, reload, set] = useLoad(() => api<DecisionDetails>('GET', `/workspaces/${ws}/decisions/${encodeURIComponent(id)}`), [ws, id]);
  const current = decisionView(view);
  const views = DECISION_VIEWS.filter((name) => offersView(workspace, name));
  const tabs = useScrollStrip<HTMLElement>(current);
  return (
    <Loaded value={value} reload={reload}>
      {(decision) => (
        <Page title={decision.name}>
          <p className="muted">
            <code>{decision.slug}</code> ·{' '}
            <span className={`badge ${decision.status}`}>{t(decision.status === 'draft' ? 'dec.status.draft' : 'dec.status.deployed')}</span>
            {decision.status === 'deployed' && !decision.endpoint_enabled && (
              <>
                {' '}
                <span className="badge error" data-testid="disabled-badge">
                  {t('dec.status.disabled')}
                </span>
              </>
            )}
            {decision.active_version !== null && <> · {t('pg.versionN', { version: decision.active_version })}</>}
          </p>
          <nav className="tabs strip" aria-label={decision.name} ref={tabs}>
            {views.map((name) => (
              <Link key={name} href={`/decisions/${id}/${name}`} aria-current={current === name ? 'page' : undefined}>
                {t(`tabs.${name}`)}
              </Link>
            ))}
          </nav>
          <ScreenSlot key={view}>
            {current === 'overview' && views.includes('overview') && <Overview decision={decision} />}
            {current === 'quality' && views.includes('quality') && <Quality decision={decision} onDraftChanged={reload} />}
            {current === 'editor' && views.includes('editor') && <Editor decision={decision} onSaved={set} />}
            {current === 'playground' && views.includes('playground') && <Playground decision={decision} />}
            {current === 'deploy' && views.includes('deploy') && <Deploy decision={decision} reload={reload} />}
            {current === 'executions' && views.includes('executions') && <ExecutionsTable decision={decision.slug} />}
            {current === 'deliveries' && views.includes('deliveries') && <DeliveriesTable decisionId={decision.id} />}
            {current === 'secret-url' && views.includes('secret-url') && <SecretUrl decision={decision} />}
            {current === 'history' && views.includes('history') && <History decision={decision} reload={reload} />}
            {current === 'replay' && views.includes('replay') && <Replay decision={decision} />}
            {(current === null || !views.includes(current)) && <p role="alert">{t('error.notFound')}</p>}
          </ScreenSlot>
        </Page>
      )}
    </Loaded>
  );
}

/** The API's limit on a deploy note (`deployNote` in libs/contracts); the field stops there rather than failing the deploy. */
const DEPLOY_NOTE_MAX_LENGTH = 500;

function Deploy({ decision, reload }: { decision: DecisionDetails; reload: () => void }) {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const [message, setMessage] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [note, setNote] = useState('');
  const [switchingOff, setSwitchingOff] = useState(false);
  const { busy, error, act: run } = useAction(reload);
  const active = useMemo(() => normalizedOf(decision.active_schema), [decision.active_schema]);
  const draft = useMemo(() => normalizedOf(decision.draft), [decision.draft]);
  const unchanged = active !== null && draft !== null && sameJson(active, draft);
  const admin = may(workspace, 'decisions:deploy');
  // The service's review adds the secret check; the same words are computed here at once, and for those who may not ask.
  const local = useMemo(() => (draft ? reviewVersions(active, draft) : null), [active, draft]);
  const [served] = useLoad(
    () => (admin ? api<ReviewReply>('GET', `/workspaces/${ws}/decisions/${decision.id}/review`) : Promise.resolve(null)),
    [ws, decision.id, decision.revision, decision.active_version, admin],
  );
  const reply = served.state === 'ready' ? served.data : null;
  const review = reply?.review ?? local;
  const missing = reply ? reply.missing_secrets : [];
  // The list the API answers (and reports again in the deploy's answer), once it is in; the page's own until then.
  const breaking = review?.breaking ?? [];
  // A deploy is confirmed against the service's list, so it waits for the review the service is asked for.
  const reviewing = admin && served.state === 'loading';

  const act = async (work: () => Promise<string | null>) => {
    setMessage(null);
    const said = await run(work);
    if (said !== undefined) setMessage(said);
  };

  const deploy = () => {
    setConfirming(false);
    void act(async () => {
      const body = note.trim() === '' ? undefined : { note };
      const { version } = await api<DeployedReply>('POST', `/workspaces/${ws}/decisions/${decision.id}/deploy`, body);
      setNote('');
      return t('dep.deployed', { version });
    });
  };

  const setEndpoint = (enabled: boolean) =>
    void act(async () => {
      await api('PUT', `/workspaces/${ws}/decisions/${decision.id}/endpoint`, { enabled });
      return t(enabled ? 'dep.endpointOn' : 'dep.endpointOff');
    });

  const runUrl = `${location.origin}/v1/decisions/${decision.slug}`;
  const nextVersion = Math.max(0, ...decision.versions) + 1;
  return (
    <div className="stack">
      <Outcome error={error} message={message} />
      <section className="card" aria-labelledby="diff-title">
        <h2 id="diff-title">{t('review.title')}</h2>
        {unchanged ? <p>{t('dep.same', { version: decision.active_version ?? 0 })}</p> : review !== null && <ReviewView review={review} />}
        {breaking.length > 0 && <BreakingList changes={breaking} />}
        {!unchanged && <MissingSecretsNote missing={missing} />}
        <button type="button" className="primary" disabled={!admin || busy || reviewing || unchanged || draft === null} onClick={() => setConfirming(true)}>
          {t('dep.deploy')}
        </button>
        {draft === null && <p className="muted small">{t('dep.invalidDraft')}</p>}
        {!admin && <p className="muted small">{t('error.forbidden')}</p>}
      </section>
      {confirming && (
        <ConfirmDialog
          title={t('dep.confirmTitle', { version: nextVersion })}
          confirmLabel={t(breaking.length > 0 ? 'dep.deployBreaking' : 'dep.deploy')}
          danger={breaking.length > 0}
          typed={breaking.length > 0 ? decision.slug : undefined}
          busy={busy}
          onCancel={() => setConfirming(false)}
          onConfirm={deploy}
        >
          {breaking.length > 0 ? <BreakingList changes={breaking} /> : <p>{t('dep.confirmBody')}</p>}
          <MissingSecretsNote missing={missing} />
          <label className="field">
            <span>{t('dep.note')}</span>
            <textarea
              rows={2}
              maxLength={DEPLOY_NOTE_MAX_LENGTH}
              value={note}
              aria-describedby="deploy-note-hint"
              onChange={(event) => setNote(event.target.value)}
            />
            <small id="deploy-note-hint">{t('dep.noteHint', { max: DEPLOY_NOTE_MAX_LENGTH })}</small>
          </label>
        </ConfirmDialog>
      )}
      <section className="card" aria-labelledby="endpoint-title">
        <h2 id="endpoint-title">{t('dec.endpoint')}</h2>
        <label className="check">
          <input
            type="checkbox"
            checked={decision.endpoint_enabled}
            disabled={!admin || busy}
            aria-describedby="endpoint-hint"
            onChange={(event) => {
              // Switching off refuses live calls at once: asked first. Switching on harms nobody.
              if (event.target.checked) setEndpoint(true);
              else setSwitchingOff(true);
            }}
          />
          <span>{t('dep.endpoint')}</span>
        </label>
        <small id="endpoint-hint">{t('dep.endpointHint')}</small>
        {switchingOff && (
          <ConfirmDialog
            title={t('dep.offTitle', { slug: decision.slug })}
            confirmLabel={t('dep.offConfirm')}
            danger
            onCancel={() => setSwitchingOff(false)}
            onConfirm={() => {
              setSwitchingOff(false);
              setEndpoint(false);
            }}
          >
            <p>{t('dep.offBody')}</p>
          </ConfirmDialog>
        )}
        <h3>{t('dep.runUrl')}</h3>
        <pre className="code">{`curl -X POST ${runUrl} \\\n  -H "Authorization: Bearer $API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"state": …}'`}</pre>
      </section>
      <section className="card" aria-labelledby="versions-title">
        <h2 id="versions-title">{t('dep.versions')}</h2>
        {decision.versions.length === 0 ? (
          <p className="muted">—</p>
        ) : (
          <ul>
            {decision.versions.map((version) => (
              <li key={version}>
                {t('pg.versionN', { version })} {version === decision.active_version && <span className="badge deployed">{t('dep.active')}</span>}
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}

import { FormEvent, useState } from 'react';
import { api } from '../lib/api';
import { can, useApp } from '../context';
import { ErrorBox, Loaded, Page, RefusedPage, useAction, useLoad } from '../ui';

interface EngineSettings {
  use_own_key: boolean;
  provider_key: { provider: string; last4: string } | null;
  llm_provider: string;
  default_engine: 'llm' | 'checkpoint' | null;
  service_default_engine: 'llm' | 'checkpoint';
}

interface KeyTest {
  ok: boolean;
  provider: string;
  model: string | null;
  code: string | null;
  reason: string | null;
}

/** The workspace's own LLM provider key (never shown back, only its last four characters) and whether runs use it. */
export function Settings() {
  const { t, workspace } = useApp();
  const ws = workspace!.id;
  const admin = can(workspace, 'admin');
  const [settings, reload, set] = useLoad(() => (admin ? api<EngineSettings>('GET', `/workspaces/${ws}/engine-settings`) : Promise.resolve(null)), [ws, admin]);
  const { busy, error, act } = useAction();
  const [test, setTest] = useState<KeyTest | null>(null);

  // A key is saved only once a test call with it passed: a key that does not work would fail every run.
  const saveKey = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const key = { provider: data.get('provider'), api_key: data.get('api_key') };
    setTest(null);
    void act(async () => {
      const result = await api<KeyTest>('POST', `/workspaces/${ws}/provider-key/test`, key);
      setTest(result);
      if (!result.ok) return;
      await api('PUT', `/workspaces/${ws}/provider-key`, key);
      form.reset();
      reload();
    });
  };

  const testSaved = () => {
    setTest(null);
    void act(async () => setTest(await api<KeyTest>('POST', `/workspaces/${ws}/provider-key/test`)));
  };

  if (!admin) return <RefusedPage title={t('set.title')} note={t('set.adminOnly')} />;
  return (
    <Page title={t('set.title')}>
      {error !== null && <ErrorBox error={error} />}
      <Loaded value={settings} reload={reload}>
        {(current) =>
          current && (
            <div className="stack">
              <section className="card" aria-labelledby="default-engine-title">
                <h2 id="default-engine-title">{t('set.defaultEngine')}</h2>
                <label className="field narrow">
                  <span>{t('set.defaultEngineLabel')}</span>
                  <select
                    value={current.default_engine ?? ''}
                    disabled={busy}
                    aria-describedby="default-engine-hint"
                    onChange={(event) => {
                      const engine = event.target.value === '' ? null : event.target.value;
                      void act(async () => set(await api<EngineSettings>('PUT', `/workspaces/${ws}/engine-settings`, { default_engine: engine })));
                    }}
                  >
                    <option value="">{t('set.engineService', { engine: current.service_default_engine })}</option>
                    <option value="llm">{t('set.engineLlm')}</option>
                    <option value="checkpoint">{t('set.engineCheckpoint')}</option>
                  </select>
                  <small id="default-engine-hint">{t('set.defaultEngineHint')}</small>
                </label>
              </section>
              <section className="card" aria-labelledby="engine-title">
                <h2 id="engine-title">{t('set.engine')}</h2>
                <p>
                  {t('set.provider')}: <strong>{current.llm_provider}</strong>
                </p>
                <label className="check">
                  <input
                    type="checkbox"
                    checked={current.use_own_key}
                    disabled={busy || (!current.use_own_key && current.provider_key === null)}
                    aria-describedby="own-key-hint"
                    onChange={(event) => {
                      const useOwnKey = event.target.checked;
                      void act(async () => set(await api<EngineSettings>('PUT', `/workspaces/${ws}/engine-settings`, { use_own_key: useOwnKey })));
                    }}
                  />
                  <span>{t('set.useOwnKey')}</span>
                </label>
                <small id="own-key-hint">
                  {t('set.useOwnKeyHint')} {current.provider_key === null && t('set.ownKeyNeedsKey')}
                </small>
              </section>
              <section className="card" aria-labelledby="key-title">
                <h2 id="key-title">{t('set.providerKey')}</h2>
                {current.provider_key ? (
                  <p>
                    {current.provider_key.provider} · <code>…{current.provider_key.last4}</code>{' '}
                    <button type="button" disabled={busy} onClick={testSaved}>
                      {t('set.testKey')}
                    </button>{' '}
                    <button
                      type="button"
                      className="danger"
                      disabled={busy}
                      onClick={() =>
                        void act(async () => {
                          await api('DELETE', `/workspaces/${ws}/provider-key`);
                          reload();
                        })
                      }
                    >
                      {t('set.removeKey')}
                    </button>
                  </p>
                ) : (
                  <p className="muted">{t('set.noKey')}</p>
                )}
                {test && (
                  <p className={test.ok ? 'notice' : 'error'} role="status" data-testid="key-test">
                    {test.ok
                      ? t('set.testPassed', { provider: test.provider, model: test.model ?? '—' })
                      : t('set.testFailed', { provider: test.provider, code: test.code ?? '', reason: test.reason ?? '' })}
                  </p>
                )}
                <form className="inline-form" onSubmit={saveKey}>
                  <label className="field">
                    <span>{t('set.provider')}</span>
                    <select name="provider" defaultValue={current.llm_provider}>
                      <option value="anthropic">anthropic</option>
                      <option value="openai">openai</option>
                    </select>
                  </label>
                  <label className="field">
                    <span>{t('set.apiKey')}</span>
                    <input name="api_key" type="password" autoComplete="off" required />
                  </label>
                  <button type="submit" className="primary" disabled={busy}>
                    {t('set.testAndSave')}
                  </button>
                </form>
              </section>
            </div>
          )
        }
      </Loaded>
    </Page>
  );
}

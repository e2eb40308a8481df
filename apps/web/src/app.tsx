import { ReactNode, useCallback, useEffect, useMemo, useState } from 'react';
import { api, authenticateWithEmbedCookie, EmbedSessionView, session, Workspace } from './lib/api';
import { embedAllows, homePath, isEmbedPermission, mayBeEmbedded, offersScreen, permits, screenOf, WORKSPACE_SCREENS, WorkspaceScreen } from './lib/access';
import { isLocale, LOCALES, Locale, MessageKey, translate } from './lib/i18n';
import { initialPreferences, isTheme, Theme } from './lib/prefs';
import { local, tabStorage } from './lib/storage';
import { AppContext, AppState, useApp } from './context';
import { leaveThen, Link, match, navigate, useLocation } from './router';
import { Loading } from './ui';
import { useScrollStrip } from './components/scroll-strip';
import { lazyScreen, ScreenSlot } from './components/lazy-screen';
import { screenKey } from './lib/screen-key';

// Each screen is its own file, fetched when its route is first drawn: signing in loads the shell and that form alone.
const SignIn = lazyScreen(() => import('./screens/auth'), 'SignIn');
const SignUp = lazyScreen(() => import('./screens/auth'), 'SignUp');
const Workspaces = lazyScreen(() => import('./screens/workspaces'), 'Workspaces');
const DecisionsList = lazyScreen(() => import('./screens/decisions'), 'DecisionsList');
const NewDecision = lazyScreen(() => import('./screens/decisions'), 'NewDecision');
const DecisionPage = lazyScreen(() => import('./screens/decision'), 'DecisionPage');
const ExecutionDetail = lazyScreen(() => import('./screens/executions'), 'ExecutionDetail');
const Executions = lazyScreen(() => import('./screens/execution-list'), 'Executions');
const ApiKeys = lazyScreen(() => import('./screens/keys'), 'ApiKeys');
const Secrets = lazyScreen(() => import('./screens/secrets'), 'Secrets');
const Members = lazyScreen(() => import('./screens/members'), 'Members');
const AcceptInvitation = lazyScreen(() => import('./screens/invitations'), 'AcceptInvitation');
const AccountPage = lazyScreen(() => import('./screens/account'), 'AccountPage');
const Billing = lazyScreen(() => import('./screens/billing'), 'Billing');
const Settings = lazyScreen(() => import('./screens/settings'), 'Settings');
const Deliveries = lazyScreen(() => import('./screens/deliveries'), 'Deliveries');
const DeliveryDetail = lazyScreen(() => import('./screens/deliveries'), 'DeliveryDetail');
const SigningSecret = lazyScreen(() => import('./screens/deliveries'), 'SigningSecret');
const Reviews = lazyScreen(() => import('./screens/reviews'), 'Reviews');

const WORKSPACE_KEY = 'ds.workspace';

function applyTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
}

export function App() {
  const initial = useMemo(() => initialPreferences(location.search, (key) => tabStorage.getItem(key) ?? local.getItem(key), navigator.languages ?? []), []);
  const [theme, setThemeState] = useState<Theme>(initial.theme);
  const [locale, setLocaleState] = useState<Locale>(initial.locale);
  const [token, setToken] = useState<string | null>(session.token);
  const [workspaces, setWorkspaces] = useState<Workspace[] | null>(null);
  const [workspaceId, setWorkspaceId] = useState<string | null>(() => new URLSearchParams(location.search).get('ws') ?? local.getItem(WORKSPACE_KEY));
  // Without a token of its own, the application may be an embed: the session cookie (HttpOnly) is only visible to the API.
  const [embed, setEmbed] = useState<EmbedSessionView | null | 'asking'>(() =>
    session.token || !mayBeEmbedded(document.cookie, window.self !== window.top) ? null : 'asking',
  );

  useEffect(() => {
    if (embed !== 'asking') return;
    api<EmbedSessionView>('GET', '/embed/session').then(
      (view) => {
        authenticateWithEmbedCookie();
        if (isTheme(view.theme)) setThemeState(view.theme);
        if (isLocale(view.locale)) setLocaleState(view.locale);
        setEmbed(view);
      },
      () => setEmbed(null),
    );
  }, [embed]);

  useEffect(() => {
    // The session was closed, revoked or expired while open: the gateway's page says to reopen it from the partner's app.
    const ended = () => location.replace('/embed/ended');
    window.addEventListener('ds:embed-ended', ended);
    return () => window.removeEventListener('ds:embed-ended', ended);
  }, []);

  useEffect(() => applyTheme(theme), [theme]);
  useEffect(() => {
    document.documentElement.lang = locale;
  }, [locale]);

  const reloadWorkspaces = useCallback(async () => {
    const reply = await api<{ data: Workspace[] }>('GET', '/workspaces');
    setWorkspaces(reply.data);
    return reply.data;
  }, []);

  useEffect(() => {
    if (embed !== null) return;
    if (token) reloadWorkspaces().catch(() => setWorkspaces([]));
    else setWorkspaces(null);
  }, [token, reloadWorkspaces, embed]);

  useEffect(() => {
    const signedOut = () => {
      session.set(null);
      setToken(null);
    };
    window.addEventListener('ds:signed-out', signedOut);
    return () => window.removeEventListener('ds:signed-out', signedOut);
  }, []);

  const embedView = embed === 'asking' ? null : embed;
  // An embed session works in its one sub-workspace, with the partner's permissions in place of a role.
  const embedWorkspace = useMemo<Workspace | null>(
    () => (embedView ? { id: embedView.workspace_id, name: '', role: 'viewer', permissions: embedView.permissions.filter(isEmbedPermission) } : null),
    [embedView],
  );
  const workspace = embedWorkspace ?? workspaces?.find((candidate) => candidate.id === workspaceId) ?? workspaces?.[0] ?? null;

  const state: AppState = {
    theme,
    setTheme: (next) => {
      local.setItem('ds.theme', next);
      tabStorage.removeItem('ds.theme');
      setThemeState(next);
    },
    locale,
    setLocale: (next) => {
      local.setItem('ds.locale', next);
      tabStorage.removeItem('ds.locale');
      setLocaleState(next);
    },
    t: (key: MessageKey, vars) => translate(locale, key, vars),
    signedIn: token !== null || embedWorkspace !== null,
    signIn: (next) => {
      session.set(next);
      setToken(next);
    },
    signOut: () => {
      void api('POST', '/auth/sign-out').catch(() => undefined);
      session.set(null);
      setToken(null);
      setWorkspaces(null);
      navigate('/sign-in');
    },
    workspaces: embedWorkspace ? [embedWorkspace] : workspaces,
    workspace,
    chooseWorkspace: (id) => {
      local.setItem(WORKSPACE_KEY, id);
      setWorkspaceId(id);
    },
    reloadWorkspaces: embedWorkspace ? async () => [embedWorkspace] : reloadWorkspaces,
    embed: embedView,
  };

  // A theme or locale passed in the query (an embed) holds for this tab only.
  useEffect(() => {
    const query = new URLSearchParams(location.search);
    if (query.get('theme')) tabStorage.setItem('ds.theme', initial.theme);
    if (query.get('locale')) tabStorage.setItem('ds.locale', initial.locale);
  }, [initial]);

  return <AppContext.Provider value={state}>{embed !== 'asking' && <Routes />}</AppContext.Provider>;
}

function Routes() {
  const app = useApp();
  const { path } = useLocation();
  const home = homePath(app.workspace);

  useEffect(() => {
    const publicPage = path === '/sign-in' || path === '/sign-up';
    // An invitation's page is read signed out too: it says what the link is for before asking for an account.
    const openPage = publicPage || path === '/invitations/accept';
    if (app.embed) {
      // No account pages in an embed: its session came from the partner and ends there.
      if (publicPage || path === '/') navigate(app.embed.start_path, true);
    } else if (!app.signedIn && !openPage) navigate(`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`, true);
    // Where to land depends on the role in the workspace, known once the workspaces are read.
    else if (app.signedIn && (publicPage || path === '/') && app.workspaces !== null) navigate(home, true);
  }, [app.signedIn, app.embed, app.workspaces, path, home]);

  if (app.embed) return <EmbedRoutes path={path} />;
  if (path === '/sign-in')
    return (
      <AuthShell>
        <SignIn />
      </AuthShell>
    );
  if (path === '/sign-up')
    return (
      <AuthShell>
        <SignUp />
      </AuthShell>
    );
  if (path === '/invitations/accept' && !app.signedIn)
    return (
      <AuthShell>
        <AcceptInvitation />
      </AuthShell>
    );
  if (!app.signedIn) return null;
  if (app.workspaces === null)
    return (
      <Shell>
        <Loading />
      </Shell>
    );
  // Before the workspace check: someone invited may have no workspace of their own yet.
  if (path === '/invitations/accept')
    return (
      <Shell>
        <AcceptInvitation />
      </Shell>
    );
  if (path === '/account')
    return (
      <Shell>
        <AccountPage />
      </Shell>
    );
  if (path === '/workspaces' || app.workspace === null)
    return (
      <Shell>
        <Workspaces />
      </Shell>
    );

  let screen;
  // A screen the role cannot use is said so without asking the API for the refusal.
  const closed = WORKSPACE_SCREENS.find(([href]) => href === path && !offersScreen(app.workspace, href));
  // Typed by each assignment: match names the pattern's params.
  let params;
  // A reviewer reaches the inbox and nothing else of the workspace: the API refuses every other route.
  const reviewerOnly = app.workspace.role === 'reviewer' && path !== '/reviews';
  if (closed || reviewerOnly) screen = <p role="alert">{app.t('error.forbidden')}</p>;
  else if (path === '/decisions') screen = <DecisionsList />;
  else if (path === '/decisions/new') screen = <NewDecision />;
  else if ((params = match('/decisions/:id', path))) screen = <DecisionPage id={params.id} view="editor" />;
  else if ((params = match('/decisions/:id/:view', path))) screen = <DecisionPage id={params.id} view={params.view} />;
  else if (path === '/executions') screen = <Executions />;
  else if (path === '/reviews') screen = <Reviews />;
  else if ((params = match('/executions/:id', path))) screen = <ExecutionDetail id={params.id} />;
  else if (path === '/keys') screen = <ApiKeys />;
  else if (path === '/members') screen = <Members />;
  else if (path === '/billing') screen = <Billing />;
  else if (path === '/settings') screen = <Settings />;
  else if (path === '/deliveries') screen = <Deliveries />;
  else if ((params = match('/deliveries/:id', path))) screen = <DeliveryDetail id={params.id} />;
  else if (path === '/signing-secret') screen = <SigningSecret />;
  else if (path === '/secrets') screen = <Secrets />;
  else screen = <p role="alert">{app.t('error.notFound')}</p>;
  return <Shell>{screen}</Shell>;
}

/** Only what the session's permissions allow; the API refuses the rest anyway. */
function EmbedRoutes({ path }: { path: string }) {
  const app = useApp();
  if (path === '/sign-in' || path === '/sign-up' || path === '/') return null;
  const screen = screenOf(path);
  if (!embedAllows(screen, app.workspace?.permissions ?? [])) {
    return (
      <Shell>
        <p role="alert">{app.t(screen.name === 'not-found' ? 'error.notFound' : 'error.embedForbidden')}</p>
      </Shell>
    );
  }
  let content;
  if (screen.name === 'decisions') content = <DecisionsList />;
  else if (screen.name === 'new-decision') content = <NewDecision />;
  else if (screen.name === 'decision') content = <DecisionPage id={screen.id} view={screen.view} />;
  else if (screen.name === 'executions') content = <Executions />;
  else if (screen.name === 'execution') content = <ExecutionDetail id={screen.id} />;
  else content = <p role="alert">{app.t('error.notFound')}</p>;
  return <Shell>{content}</Shell>;
}

function Preferences() {
  const { t, theme, setTheme, locale, setLocale } = useApp();
  return (
    <div className="prefs">
      <label>
        <span>{t('shell.theme')}</span>
        <select value={theme} onChange={(event) => setTheme(event.target.value as Theme)}>
          <option value="system">{t('shell.theme.system')}</option>
          <option value="light">{t('shell.theme.light')}</option>
          <option value="dark">{t('shell.theme.dark')}</option>
        </select>
      </label>
      <label>
        <span>{t('shell.language')}</span>
        <select value={locale} onChange={(event) => setLocale(event.target.value as Locale)}>
          {LOCALES.map((code) => (
            <option key={code} value={code}>
              {LANGUAGE_NAMES[code]}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

const LANGUAGE_NAMES: Record<Locale, string> = { en: 'English', pt: 'Português', es: 'Español', ru: 'Русский', zh: '中文' };

function AuthShell({ children }: { children: ReactNode }) {
  const { t } = useApp();
  const { path } = useLocation();
  return (
    <div className="auth-shell">
      <header className="auth-head">
        <span className="brand">{t('app.name')}</span>
        <Preferences />
      </header>
      <main id="main">
        <ScreenSlot key={screenKey(path)}>{children}</ScreenSlot>
      </main>
    </div>
  );
}

const SCREEN_NAMES: Record<WorkspaceScreen, MessageKey> = {
  '/decisions': 'nav.decisions',
  '/executions': 'nav.executions',
  '/reviews': 'nav.reviews',
  '/deliveries': 'nav.deliveries',
  '/keys': 'nav.keys',
  '/signing-secret': 'nav.signingSecret',
  '/secrets': 'nav.secrets',
  '/members': 'nav.members',
  '/billing': 'nav.billing',
  '/settings': 'nav.settings',
};

function Shell({ children }: { children: ReactNode }) {
  const app = useApp();
  const { t, workspace, workspaces } = app;
  const { path } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path]);
  const strip = useScrollStrip<HTMLUListElement>(path);
  const nav: Array<[string, MessageKey]> = app.embed
    ? [
        ...(permits(workspace, 'decisions:read') ? [['/decisions', 'nav.decisions'] as [string, MessageKey]] : []),
        ...(permits(workspace, 'executions:read') ? [['/executions', 'nav.executions'] as [string, MessageKey]] : []),
      ]
    : WORKSPACE_SCREENS.filter(([href]) => offersScreen(workspace, href)).map(([href]) => [href, SCREEN_NAMES[href]]);
  return (
    <div className="shell">
      <a className="skip" href="#main">
        {t('nav.skip')}
      </a>
      <header className="top">
        <Link href={homePath(workspace)} className="brand">
          {t('app.name')}
        </Link>
        {/* Embedded: the partner's page owns the account, the workspace, the theme and the language. */}
        {!app.embed && (
          <>
            <button type="button" className="menu-toggle" aria-expanded={menuOpen} aria-controls="shell-menu" onClick={() => setMenuOpen((open) => !open)}>
              {t('shell.menu')}
            </button>
            <div id="shell-menu" className={menuOpen ? 'top-menu open' : 'top-menu'}>
              {workspaces && workspaces.length > 0 && (
                <label className="ws-switch">
                  <span>{t('shell.workspace')}</span>
                  <select
                    value={workspace?.id ?? ''}
                    onChange={(event) => {
                      const chosen = event.target.value;
                      if (chosen === '__new') navigate('/workspaces');
                      else
                        leaveThen(() => {
                          app.chooseWorkspace(chosen);
                          navigate(homePath(workspaces.find((candidate) => candidate.id === chosen) ?? null));
                        });
                    }}
                  >
                    {workspaces.map((candidate) => (
                      <option key={candidate.id} value={candidate.id}>
                        {candidate.name}
                      </option>
                    ))}
                    <option value="__new">{t('shell.newWorkspace')}…</option>
                  </select>
                </label>
              )}
              <Preferences />
              <Link href="/account" className="button" aria-current={path === '/account' ? 'page' : undefined}>
                {t('shell.account')}
              </Link>
              <button type="button" onClick={app.signOut}>
                {t('shell.signOut')}
              </button>
            </div>
          </>
        )}
      </header>
      {workspace && (
        <nav className="side" aria-label={t('nav.main')}>
          <ul className="strip" ref={strip}>
            {nav.map(([href, key]) => (
              <li key={href}>
                <Link href={href} aria-current={path === href || path.startsWith(href + '/') ? 'page' : undefined}>
                  {t(key)}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
      )}
      <main id="main" tabIndex={-1}>
        <ScreenSlot key={screenKey(path)}>{children}</ScreenSlot>
      </main>
    </div>
  );
}

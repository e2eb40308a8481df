import {
  Access,
  decisionView,
  EMBED_PERMISSIONS,
  embedAllows,
  EmbedPermission,
  isEmbedPermission,
  mayBeEmbedded,
  DECISION_VIEWS,
  homePath,
  offersScreen,
  offersView,
  permits,
  reachesRole,
  Role,
  screenOf,
  WORKSPACE_SCREENS,
} from './access';

const ROLES: Role[] = ['viewer', 'member', 'admin', 'owner'];
const ID = 'dec_AbCdEfGhIjKlMnOpQrSt';

describe('permits', () => {
  it('maps each permission to the role the API pairs it with, for members', () => {
    const table: Record<EmbedPermission, Role[]> = {
      'decisions:read': ['viewer', 'member', 'admin', 'owner'],
      'decisions:write': ['member', 'admin', 'owner'],
      'decisions:deploy': ['admin', 'owner'],
      'decisions:delete': ['admin', 'owner'],
      'executions:read': ['viewer', 'member', 'admin', 'owner'],
      agent: ['member', 'admin', 'owner'],
    };
    for (const permission of EMBED_PERMISSIONS) {
      expect(ROLES.filter((role) => permits({ role }, permission))).toEqual(table[permission]);
    }
  });

  it('follows only the list for an embed session, whatever the role says', () => {
    const embed: Access = { role: 'owner', permissions: ['decisions:read', 'executions:read'] };
    expect(EMBED_PERMISSIONS.filter((permission) => permits(embed, permission))).toEqual(['decisions:read', 'executions:read']);
    expect(EMBED_PERMISSIONS.filter((permission) => permits({ role: 'viewer', permissions: [...EMBED_PERMISSIONS] }, permission))).toEqual([
      ...EMBED_PERMISSIONS,
    ]);
    expect(permits({ role: 'owner', permissions: [] }, 'decisions:read')).toBe(false);
    expect(permits(null, 'decisions:read')).toBe(false);
  });

  it('knows the six permission names and nothing else', () => {
    expect(EMBED_PERMISSIONS.every(isEmbedPermission)).toBe(true);
    expect(isEmbedPermission('decisions:admin')).toBe(false);
    expect(isEmbedPermission(undefined)).toBe(false);
  });
});

describe('reachesRole', () => {
  it('ranks member roles and gives an embed session none', () => {
    expect(ROLES.filter((role) => reachesRole({ role }, 'admin'))).toEqual(['admin', 'owner']);
    expect(ROLES.filter((role) => reachesRole({ role }, 'viewer'))).toEqual(ROLES);
    expect(reachesRole({ role: 'owner', permissions: [...EMBED_PERMISSIONS] }, 'viewer')).toBe(false);
    expect(reachesRole(null, 'viewer')).toBe(false);
  });

  it('lets a reviewer reach the reviews alone, and Members and up stand in for one', () => {
    expect((['reviewer', ...ROLES] as Role[]).filter((role) => reachesRole({ role }, 'reviewer'))).toEqual(['reviewer', 'member', 'admin', 'owner']);
    expect((['viewer', 'member', 'admin', 'owner'] as Role[]).filter((role) => reachesRole({ role: 'reviewer' }, role))).toEqual([]);
    expect(DECISION_VIEWS.filter((view) => offersView({ role: 'reviewer' }, view))).toEqual([]);
    expect(EMBED_PERMISSIONS.filter((permission) => permits({ role: 'reviewer' }, permission))).toEqual([]);
    expect(reachesRole({ role: 'owner', permissions: [...EMBED_PERMISSIONS] }, 'reviewer')).toBe(false);
  });
});

describe('homePath', () => {
  it('lands a reviewer in the inbox and everyone else among the decisions', () => {
    expect(homePath({ role: 'reviewer' })).toBe('/reviews');
    expect(ROLES.map((role) => homePath({ role }))).toEqual(ROLES.map(() => '/decisions'));
    expect(homePath(null)).toBe('/decisions');
  });
});

describe('offersView', () => {
  it('offers a member every view whose API the role may read, and deploy, history and replay to Admins and the Owner only', () => {
    const offered = (role: Role) => DECISION_VIEWS.filter((view) => offersView({ role }, view));
    const everyone = ['overview', 'quality', 'editor', 'playground', 'executions', 'deliveries', 'secret-url'];
    expect(offered('viewer')).toEqual(everyone);
    expect(offered('member')).toEqual(everyone);
    expect(offered('admin')).toEqual([...DECISION_VIEWS]);
    expect(offered('owner')).toEqual([...DECISION_VIEWS]);
  });

  it('offers an embed session the views its permissions cover', () => {
    const views = (permissions: EmbedPermission[]) =>
      (['editor', 'playground', 'deploy', 'executions'] as const).filter((view) => offersView({ role: 'viewer', permissions }, view));
    expect(views(['decisions:read'])).toEqual(['editor']);
    expect(views(['decisions:read', 'decisions:write'])).toEqual(['editor', 'playground']);
    expect(views(['decisions:read', 'decisions:deploy'])).toEqual(['editor', 'deploy']);
    expect(views(['decisions:read', 'executions:read'])).toEqual(['editor', 'executions']);
    expect(views([...EMBED_PERMISSIONS])).toEqual(['editor', 'playground', 'deploy', 'executions']);
    expect(offersView(null, 'editor')).toBe(false);
  });

  it('offers the quality report to whoever may read the decision, as its route asks', () => {
    expect(offersView({ role: 'viewer', permissions: ['decisions:read'] }, 'quality')).toBe(true);
    expect(offersView({ role: 'viewer', permissions: ['executions:read'] }, 'quality')).toBe(false);
    expect(offersView({ role: 'viewer' }, 'quality')).toBe(true);
  });

  it('reads builder as the editor and refuses unknown views', () => {
    expect(decisionView('builder')).toBe('editor');
    expect(decisionView('deploy')).toBe('deploy');
    expect(decisionView('history')).toBe('history');
    expect(decisionView('changelog')).toBeNull();
  });
});

describe('screenOf', () => {
  it('names the screen of each application path', () => {
    expect(screenOf('/decisions')).toEqual({ name: 'decisions' });
    expect(screenOf('/decisions/new')).toEqual({ name: 'new-decision' });
    expect(screenOf('/decisions/my-slug')).toEqual({ name: 'decision', id: 'my-slug', view: 'editor' });
    expect(screenOf('/decisions/my%20slug/deploy')).toEqual({ name: 'decision', id: 'my slug', view: 'deploy' });
    expect(screenOf('/decisions/%E0%A4%A/deploy')).toEqual({ name: 'decision', id: '%E0%A4%A', view: 'deploy' });
    expect(screenOf('/executions')).toEqual({ name: 'executions' });
    expect(screenOf('/executions/exe_1')).toEqual({ name: 'execution', id: 'exe_1' });
    for (const name of ['keys', 'members', 'billing', 'settings', 'workspaces']) expect(screenOf(`/${name}`)).toEqual({ name });
    for (const path of ['/decisions/a/b/c', '/executions/a/b', '/keys/1', '/nowhere', '/']) expect(screenOf(path)).toEqual({ name: 'not-found' });
  });

  // The start path forms of the spec's embed sessions table (libs/partner validates them).
  it('draws a decision screen for every start path an embed session may name', () => {
    const starts = [
      '/decisions',
      '/decisions/new',
      `/decisions/${ID}`,
      ...['editor', 'builder', 'playground', 'deploy', 'executions'].map((view) => `/decisions/${ID}/${view}`),
    ];
    for (const path of starts) {
      const screen = screenOf(path);
      expect(['decisions', 'new-decision', 'decision']).toContain(screen.name);
      if (screen.name === 'decision') {
        expect(screen.id).toBe(ID);
        expect(decisionView(screen.view)).not.toBeNull();
      }
      expect(embedAllows(screen, [...EMBED_PERMISSIONS])).toBe(true);
    }
  });
});

describe('embedAllows', () => {
  it('opens screens by permission and never the account screens', () => {
    const allowed = (path: string, permissions: EmbedPermission[]) => embedAllows(screenOf(path), permissions);
    expect(allowed('/decisions', ['decisions:read'])).toBe(true);
    expect(allowed('/decisions', ['executions:read'])).toBe(false);
    expect(allowed('/decisions/new', ['decisions:read'])).toBe(false);
    expect(allowed('/decisions/new', ['decisions:write'])).toBe(true);
    expect(allowed(`/decisions/${ID}`, ['decisions:read'])).toBe(true);
    expect(allowed(`/decisions/${ID}/builder`, ['decisions:read'])).toBe(true);
    expect(allowed(`/decisions/${ID}/deploy`, ['decisions:read'])).toBe(false);
    expect(allowed(`/decisions/${ID}/deploy`, ['decisions:read', 'decisions:deploy'])).toBe(true);
    expect(allowed(`/decisions/${ID}/deploy`, ['decisions:deploy'])).toBe(false);
    expect(allowed(`/decisions/${ID}/playground`, ['decisions:read', 'decisions:write'])).toBe(true);
    expect(allowed(`/decisions/${ID}/executions`, ['decisions:read'])).toBe(false);
    expect(allowed(`/decisions/${ID}/unknown`, ['decisions:read'])).toBe(true);
    expect(allowed('/executions', ['executions:read'])).toBe(true);
    expect(allowed('/executions/exe_1', ['decisions:read'])).toBe(false);
    for (const path of ['/keys', '/members', '/billing', '/settings', '/workspaces']) expect(allowed(path, [...EMBED_PERMISSIONS])).toBe(false);
    expect(allowed('/nowhere', [])).toBe(true);
  });
});

describe('offersScreen', () => {
  it('hides the keys, signing secret, secrets and engine settings below Admin, the reviews below Member, and offers a reviewer the reviews alone', () => {
    const offered = (access: Access | null) => WORKSPACE_SCREENS.filter(([path]) => offersScreen(access, path)).map(([path]) => path);
    const forAll = ['/decisions', '/executions', '/deliveries', '/members', '/billing'];
    expect(offered({ role: 'viewer' })).toEqual(forAll);
    expect(offered({ role: 'member' })).toEqual(['/decisions', '/executions', '/reviews', '/deliveries', '/members', '/billing']);
    expect(offered({ role: 'reviewer' })).toEqual(['/reviews']);
    expect(offered({ role: 'admin' })).toEqual(WORKSPACE_SCREENS.map(([path]) => path));
    expect(offered({ role: 'owner' })).toEqual(WORKSPACE_SCREENS.map(([path]) => path));
  });

  it('opens none of them to an embed session or to nobody', () => {
    expect(WORKSPACE_SCREENS.filter(([path]) => offersScreen({ role: 'owner', permissions: ['decisions:read'] }, path))).toEqual([]);
    expect(WORKSPACE_SCREENS.filter(([path]) => offersScreen(null, path))).toEqual([]);
  });
});

describe('mayBeEmbedded', () => {
  it('asks for an embed session only with the launch’s hint cookie or inside a frame', () => {
    expect(mayBeEmbedded('', false)).toBe(false);
    expect(mayBeEmbedded('theme=dark; other=1', false)).toBe(false);
    expect(mayBeEmbedded('a=1; ds_embed_hint=1', false)).toBe(true);
    expect(mayBeEmbedded('ds_embed_hint=1', false)).toBe(true);
    // A cleared hint holds no value.
    expect(mayBeEmbedded('ds_embed_hint=', false)).toBe(false);
    expect(mayBeEmbedded('', true)).toBe(true);
  });
});

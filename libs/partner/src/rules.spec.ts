import {
  checkEmbedSession,
  checkListQuery,
  checkPartnerSettings,
  checkRevoke,
  checkSubWorkspace,
  decodeCursor,
  limitsAbovePlan,
  subWorkspaceOverrides,
  EMBED_PERMISSIONS,
  encodeCursor,
  frameAncestors,
  isLocalDevelopmentOrigin,
  isValidStartPath,
  normalizeOrigin,
  parseRef,
  resolveOrigins,
} from './rules';

const paths = (issues: Array<{ path: string }>) => issues.map((issue) => issue.path);
const UUID = '0b6a7a54-4f5e-4c1e-9a51-2f4d0f1f9e01';
const DEC = 'dec_ABCDEFGHIJ0123456789';

describe('sub-workspace references', () => {
  it('reads ids and ext: references', () => {
    expect(parseRef(UUID)).toEqual({ kind: 'id', id: UUID });
    expect(parseRef(UUID.toUpperCase())).toEqual({ kind: 'id', id: UUID });
    expect(parseRef('ext:acme-42')).toEqual({ kind: 'external', externalId: 'acme-42' });
    expect(parseRef('ext:a.b_c:d-e')).toEqual({ kind: 'external', externalId: 'a.b_c:d-e' });
  });

  it.each(['', 'ext:', 'ext:has space', `ext:${'x'.repeat(129)}`, 'acme', '123', 'ext:é', null, 42])('refuses %p', (ref) => {
    expect(parseRef(ref)).toBeNull();
  });
});

describe('sub-workspace fields', () => {
  it('accepts a full creation', () => {
    const { fields, issues } = checkSubWorkspace(
      {
        external_id: 'acme',
        name: 'Acme',
        metadata: { plan: 'pro' },
        limits: { max_decisions: 3, monthly_decisions: null },
        seed: { decisions: ['a', 'a', 'b-c'], deploy: true },
      },
      'create',
    );
    expect(issues).toEqual([]);
    expect(fields).toEqual({
      external_id: 'acme',
      name: 'Acme',
      metadata: { plan: 'pro' },
      limits: { max_decisions: 3, monthly_decisions: null },
      seed: { decisions: ['a', 'b-c'], deploy: true },
    });
  });

  it('needs external_id and name on creation', () => {
    expect(paths(checkSubWorkspace({}, 'create').issues)).toEqual(['external_id', 'name']);
    expect(paths(checkSubWorkspace({ external_id: 'x'.repeat(129), name: 'n' }, 'create').issues)).toEqual(['external_id']);
    expect(paths(checkSubWorkspace({ external_id: 'a b', name: 'n' }, 'create').issues)).toEqual(['external_id']);
    expect(checkSubWorkspace({ external_id: 'x'.repeat(128), name: 'n'.repeat(80) }, 'create').issues).toEqual([]);
    expect(paths(checkSubWorkspace({ external_id: 'a', name: 'n'.repeat(81) }, 'create').issues)).toEqual(['name']);
    expect(paths(checkSubWorkspace({ external_id: 'a', name: '  ' }, 'create').issues)).toEqual(['name']);
  });

  it('bounds metadata to 20 string pairs', () => {
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v']));
    expect(checkSubWorkspace({ metadata: twenty }, 'update').issues).toEqual([]);
    expect(paths(checkSubWorkspace({ metadata: { ...twenty, k20: 'v' } }, 'update').issues)).toEqual(['metadata']);
    expect(paths(checkSubWorkspace({ metadata: { a: 1 } }, 'update').issues)).toEqual(['metadata.a']);
    expect(paths(checkSubWorkspace({ metadata: { a: 'x'.repeat(501) } }, 'update').issues)).toEqual(['metadata.a']);
    expect(paths(checkSubWorkspace({ metadata: ['a'] }, 'update').issues)).toEqual(['metadata']);
    expect(paths(checkSubWorkspace({ metadata: { ['k'.repeat(41)]: 'v' } }, 'update').issues)).toEqual([`metadata.${'k'.repeat(41)}`]);
  });

  it('reads limits as non-negative integers or null', () => {
    expect(checkSubWorkspace({ limits: { max_decisions: null } }, 'update').fields.limits).toEqual({ max_decisions: null });
    expect(paths(checkSubWorkspace({ limits: { max_decisions: -1, monthly_decisions: 1.5, other: 1 } }, 'update').issues)).toEqual([
      'limits.max_decisions',
      'limits.monthly_decisions',
      'limits.other',
    ]);
    expect(paths(checkSubWorkspace({ limits: 5 }, 'update').issues)).toEqual(['limits']);
  });

  it('refuses limits past their 32-bit columns, naming the field', () => {
    for (const value of [2 ** 31, 2 ** 53, 2 ** 63, 1e300]) {
      expect(paths(checkSubWorkspace({ limits: { max_decisions: value, monthly_decisions: value } }, 'update').issues)).toEqual([
        'limits.max_decisions',
        'limits.monthly_decisions',
      ]);
    }
    expect(checkSubWorkspace({ limits: { monthly_decisions: 2 ** 31 - 1 } }, 'update').issues).toEqual([]);
  });

  it('takes seed on creation only, with slugs', () => {
    expect(paths(checkSubWorkspace({ seed: { decisions: ['a'] } }, 'update').issues)).toEqual(['seed']);
    expect(paths(checkSubWorkspace({ external_id: 'a', name: 'n', seed: { decisions: ['Bad_Slug'], deploy: 'yes' } }, 'create').issues)).toEqual([
      'seed.decisions.0',
      'seed.deploy',
    ]);
    expect(paths(checkSubWorkspace({ external_id: 'a', name: 'n', seed: { decisions: Array(51).fill('a') } }, 'create').issues)).toEqual(['seed.decisions']);
    expect(checkSubWorkspace({ external_id: 'a', name: 'n', seed: { decisions: [] } }, 'create').fields.seed).toEqual({ decisions: [], deploy: false });
  });
});

describe('origins', () => {
  it('normalises https origins and loopback http ones', () => {
    expect(normalizeOrigin('https://App.Example.com')).toBe('https://app.example.com');
    expect(normalizeOrigin('https://example.com:8443')).toBe('https://example.com:8443');
    expect(normalizeOrigin('https://example.com:443')).toBe('https://example.com');
    expect(normalizeOrigin('http://localhost:5173')).toBe('http://localhost:5173');
    expect(normalizeOrigin('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
  });

  it.each([
    'http://example.com',
    'https://example.com/path',
    'https://example.com/',
    'https://u:p@example.com',
    'https://example.com?x=1',
    'ftp://example.com',
    'example.com',
    '*',
    '',
    7,
  ])('refuses %p', (value) => {
    expect(normalizeOrigin(value)).toBeNull();
  });

  it('knows local development origins', () => {
    expect(isLocalDevelopmentOrigin('http://localhost:3000')).toBe(true);
    expect(isLocalDevelopmentOrigin('http://127.0.0.1')).toBe(true);
    expect(isLocalDevelopmentOrigin('https://localhost.example.com')).toBe(false);
  });

  it('takes a subset of the allowed origins, and local ones for test keys only', () => {
    const allowed = ['https://a.example', 'https://b.example'];
    expect(resolveOrigins(null, allowed, true)).toEqual({ origins: allowed, issues: [] });
    expect(resolveOrigins(['https://b.example'], allowed, true)).toEqual({ origins: ['https://b.example'], issues: [] });
    expect(paths(resolveOrigins(['https://b.example', 'https://c.example'], allowed, true).issues)).toEqual(['origins.1']);
    expect(paths(resolveOrigins(['http://localhost:5173'], allowed, true).issues)).toEqual(['origins.0']);
    expect(resolveOrigins(['http://localhost:5173'], allowed, false)).toEqual({ origins: ['http://localhost:5173'], issues: [] });
    expect(paths(resolveOrigins(null, [], true).issues)).toEqual(['origins']);
  });

  it('frames by the session origins only', () => {
    expect(frameAncestors(['https://a.example', 'http://localhost:1'])).toBe('frame-ancestors https://a.example http://localhost:1');
    expect(frameAncestors([])).toBe("frame-ancestors 'none'");
  });

  it('checks the operator switch', () => {
    expect(checkPartnerSettings({ enabled: true, allowed_origins: ['https://a.example', 'https://A.example'] })).toEqual({
      settings: { enabled: true, allowedOrigins: ['https://a.example'] },
      issues: [],
    });
    expect(checkPartnerSettings({ enabled: false }).settings).toEqual({ enabled: false, allowedOrigins: [] });
    expect(paths(checkPartnerSettings({ enabled: 'yes', allowed_origins: ['http://a.example'] }).issues)).toEqual(['enabled', 'allowed_origins.0']);
    expect(paths(checkPartnerSettings({ enabled: true, allowed_origins: 'https://a.example' }).issues)).toEqual(['allowed_origins']);
  });
});

describe('start paths', () => {
  it.each([
    '/decisions',
    '/decisions/new',
    `/decisions/${DEC}`,
    ...['editor', 'builder', 'playground', 'deploy', 'executions'].map((view) => `/decisions/${DEC}/${view}`),
  ])('accepts %s', (path) => expect(isValidStartPath(path)).toBe(true));

  it.each([
    '/',
    '/decisions/',
    '/decisions/new/editor',
    `/decisions/${DEC}/settings`,
    '/decisions/my-slug',
    '//evil.example/decisions',
    'https://evil.example/decisions',
    '/decisions?x=1',
    `/decisions/${DEC}/editor/`,
  ])('refuses %s', (path) => expect(isValidStartPath(path)).toBe(false));
});

describe('embed session requests', () => {
  const base = { workspace: 'ext:acme', user: { id: 'u1' } };

  it('fills the defaults', () => {
    expect(checkEmbedSession(base)).toEqual({
      fields: {
        workspace: { ref: 'ext:acme' },
        user: { id: 'u1', name: null, email: null },
        permissions: [...EMBED_PERMISSIONS],
        startPath: '/decisions',
        origins: null,
        locale: null,
        theme: null,
        ttlSeconds: 3600,
      },
      issues: [],
    });
  });

  it('accepts each rule at its bounds', () => {
    for (const ttl of [300, 43_200]) expect(checkEmbedSession({ ...base, ttl_seconds: ttl }).issues).toEqual([]);
    for (const locale of ['en', 'pt', 'es', 'ru', 'zh']) expect(checkEmbedSession({ ...base, locale }).issues).toEqual([]);
    for (const theme of ['light', 'dark', 'system']) expect(checkEmbedSession({ ...base, theme }).issues).toEqual([]);
    expect(checkEmbedSession({ ...base, permissions: ['agent', 'decisions:read', 'agent'] }).fields?.permissions).toEqual(['decisions:read', 'agent']);
    expect(checkEmbedSession({ ...base, permissions: [] }).fields?.permissions).toEqual([]);
    expect(checkEmbedSession({ ...base, workspace: { external_id: 'new', name: 'New' } }).fields?.workspace).toEqual({
      create: { external_id: 'new', name: 'New' },
    });
  });

  it('names every broken field', () => {
    const { issues } = checkEmbedSession({
      workspace: 'acme',
      user: { id: '', email: 'nope' },
      permissions: ['decisions:read', 'admin'],
      start_path: '/settings',
      origins: ['https://a.example/path'],
      locale: 'de',
      theme: 'blue',
      ttl_seconds: 299,
    });
    expect(paths(issues)).toEqual(['workspace', 'user.id', 'user.email', 'permissions.1', 'start_path', 'origins.0', 'locale', 'theme', 'ttl_seconds']);
    expect(paths(checkEmbedSession({ workspace: { name: 'x' } }).issues)).toEqual(['workspace.external_id', 'user']);
    expect(paths(checkEmbedSession({ ...base, ttl_seconds: 43_201 }).issues)).toEqual(['ttl_seconds']);
    expect(paths(checkEmbedSession({ ...base, ttl_seconds: 600.5 }).issues)).toEqual(['ttl_seconds']);
    expect(paths(checkEmbedSession({ ...base, origins: [] }).issues)).toEqual(['origins']);
    expect(paths(checkEmbedSession({ ...base, permissions: 'agent' }).issues)).toEqual(['permissions']);
    expect(paths(checkEmbedSession({ user: { id: 'u' } }).issues)).toEqual(['workspace']);
  });
});

describe('list paging and revoke', () => {
  it('round-trips cursors and refuses forged ones', () => {
    const cursor = encodeCursor('2026-11-23T10:00:00.000Z', UUID);
    expect(decodeCursor(cursor)).toEqual({ createdAt: '2026-11-23T10:00:00.000Z', id: UUID });
    expect(decodeCursor('not-a-cursor')).toBeNull();
    expect(decodeCursor(Buffer.from('["x","y"]').toString('base64url'))).toBeNull();
    expect(decodeCursor('')).toBeNull();
  });

  it('refuses cursors holding dates PostgreSQL cannot read, and spells the others as it reads them', () => {
    const forged = (date: string) => Buffer.from(JSON.stringify([date, UUID])).toString('base64url');
    for (const date of ['+275760-09-13T00:00:00.000Z', '-271821-04-20T00:00:00.000Z', '+010000-01-01T00:00:00.000Z', '-000001-01-01T00:00:00.000Z']) {
      expect(decodeCursor(forged(date))).toBeNull();
    }
    expect(decodeCursor(forged('2026-11-23T11:00:00+01:00'))).toEqual({ createdAt: '2026-11-23T10:00:00.000Z', id: UUID });
  });

  it('checks limit, cursor and external_id', () => {
    expect(checkListQuery({})).toEqual({ limit: 20, after: null, externalId: null, issues: [] });
    expect(checkListQuery({ limit: '100', external_id: 'acme' })).toMatchObject({ limit: 100, externalId: 'acme', issues: [] });
    expect(paths(checkListQuery({ limit: '101', cursor: 'zz', external_id: 'a b' }).issues)).toEqual(['limit', 'cursor', 'external_id']);
    expect(paths(checkListQuery({ limit: '0' }).issues)).toEqual(['limit']);
  });

  it('needs a workspace or a user to revoke', () => {
    expect(checkRevoke({ workspace: 'ext:a' })).toEqual({ workspace: 'ext:a', userId: null, issues: [] });
    expect(checkRevoke({ user_id: 'u' })).toEqual({ workspace: null, userId: 'u', issues: [] });
    expect(paths(checkRevoke({}).issues)).toEqual(['workspace']);
    expect(paths(checkRevoke({ workspace: 'nope', user_id: 5 }).issues)).toEqual(['workspace', 'user_id']);
  });
});

describe('a sub-workspace inside its partner’s plan', () => {
  const developer = {
    name: 'developer' as const,
    rate_limit_per_minute: 77,
    hard_cap: false,
    included_decisions: 5_000,
    max_decisions: 10,
    price_per_million_cents: 12_345,
    retention_days: 30,
  };

  it('refuses limits above the partner’s, naming them under the prefix', () => {
    expect(limitsAbovePlan({ max_decisions: 10, monthly_decisions: 5_000 }, developer)).toEqual([]);
    expect(limitsAbovePlan({ max_decisions: null, monthly_decisions: null }, developer)).toEqual([]);
    expect(limitsAbovePlan(undefined, developer)).toEqual([]);
    expect(paths(limitsAbovePlan({ max_decisions: 11, monthly_decisions: 5_001 }, developer, 'workspace.'))).toEqual([
      'workspace.limits.max_decisions',
      'workspace.limits.monthly_decisions',
    ]);
    expect(limitsAbovePlan({ max_decisions: 1e6 }, { ...developer, max_decisions: null })).toEqual([]);
  });

  it('carries the partner’s plan, narrowed by its own limits', () => {
    expect(subWorkspaceOverrides(developer, { max_decisions: null, monthly_decisions: null })).toEqual({
      included_decisions: 5_000,
      max_decisions: 10,
      rate_limit_per_minute: 77,
      hard_cap: false,
      price_per_million_cents: 12_345,
    });
    expect(subWorkspaceOverrides(developer, { max_decisions: 3, monthly_decisions: 40 })).toMatchObject({
      included_decisions: 40,
      max_decisions: 3,
      hard_cap: true,
    });
    // A partner plan shrunk below a limit set earlier wins.
    expect(subWorkspaceOverrides({ ...developer, max_decisions: 2, included_decisions: 30 }, { max_decisions: 3, monthly_decisions: 40 })).toMatchObject({
      included_decisions: 30,
      max_decisions: 2,
    });
    expect(subWorkspaceOverrides({ ...developer, max_decisions: null }, { max_decisions: null, monthly_decisions: null }).max_decisions).toBeNull();
  });
});

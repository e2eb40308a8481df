import {
  call,
  createDecision,
  deploy,
  deployedDecision,
  expectError,
  newWorkspace,
  runDecision,
  scriptEngine,
  triageSchema,
  uniqueMarker,
  Workspace,
  roomyWorkspace,
} from './support/api';

/**
 * The public read endpoints: GET /v1/decisions, /v1/decisions/{slug} and /v1/executions with its limit,
 * filters and cursor, including paging while new runs keep arriving.
 */

const executions = (ws: Workspace, query = '') => call('GET', `/v1/executions${query}`, { token: ws.apiKey });

/** Runs `count` decisions with at most `parallel` in flight; answers the execution ids in completion order. */
async function runMany(ws: Workspace, slug: string, count: number, parallel = 4): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        next++;
        const reply = await runDecision(ws, slug, { message: `run ${next}` });
        if (reply.status !== 200) throw new Error(`run failed: ${reply.text}`);
        ids.push(reply.body.execution_id);
      }
    }),
  );
  return ids;
}

describe('GET /v1/decisions', () => {
  it('lists every decision of the workspace, oldest first, with its id, status, active version and endpoint switch', async () => {
    const ws = await roomyWorkspace();
    const alpha = await deployedDecision(ws, 'alpha', triageSchema());
    const { id: beta } = await createDecision(ws, 'beta', triageSchema());
    const gamma = await deployedDecision(ws, 'gamma', triageSchema());
    expect(
      (await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/decisions/${gamma}/endpoint`, { token: ws.session, body: { enabled: false } })).status,
    ).toBe(200);
    const listed = await call('GET', '/v1/decisions', { token: ws.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      data: [
        { id: alpha, slug: 'alpha', name: 'Decision alpha', status: 'deployed', active_version: 1, endpoint_enabled: true },
        { id: beta, slug: 'beta', name: 'Decision beta', status: 'draft', active_version: null, endpoint_enabled: true },
        { id: gamma, slug: 'gamma', name: 'Decision gamma', status: 'deployed', active_version: 1, endpoint_enabled: false },
      ],
    });
    expectError(await call('GET', '/v1/decisions'), 401, 'INVALID_API_KEY');
  });
});

describe('GET /v1/decisions/{slug}', () => {
  it('answers the active version’s contract, 404 for unknown or malformed slugs and 409 before the first deploy', async () => {
    const ws = await newWorkspace();
    const id = await deployedDecision(ws, 'contracted', triageSchema());
    const contract = await call('GET', '/v1/decisions/contracted', { token: ws.apiKey });
    expect(contract.status).toBe(200);
    expect(contract.body).toMatchObject({ slug: 'contracted', status: 'deployed', version: 1, state_schema: { type: 'object' } });
    expect(contract.body.questions.map((q: { key: string }) => q.key)).toEqual(['intent', 'urgency', 'fraud']);
    for (const hidden of ['policies', 'composites', 'destinations', 'settings', 'context']) expect(contract.body).not.toHaveProperty(hidden);
    expect((await runDecision(ws, 'contracted', contract.body.example_state)).status).toBe(200);

    const draft = await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}/draft`, {
      token: ws.session,
      body: { schema: triageSchema('v2', { fallbackAction: 'block' }), revision: 1 },
    });
    expect(draft.status).toBe(200);
    await deploy(ws, id);
    expect((await call('GET', '/v1/decisions/contracted', { token: ws.apiKey })).body.version).toBe(2);

    expectError(await call('GET', '/v1/decisions/no-such-decision', { token: ws.apiKey }), 404, 'DECISION_NOT_FOUND');
    expectError(await call('GET', '/v1/decisions/Not_A_Slug', { token: ws.apiKey }), 404, 'DECISION_NOT_FOUND');
    await createDecision(ws, 'undeployed', triageSchema());
    expectError(await call('GET', '/v1/decisions/undeployed', { token: ws.apiKey }), 409, 'DECISION_NOT_DEPLOYED');
  });
});

describe('GET /v1/executions', () => {
  let ws: Workspace;
  let firstIds: string[];
  let failedId: string;
  let secondOk: string[];

  beforeAll(async () => {
    ws = await roomyWorkspace();
    const marker = uniqueMarker();
    await deployedDecision(ws, 'first', triageSchema());
    await deployedDecision(ws, 'second', triageSchema(marker));
    firstIds = await runMany(ws, 'first', 21);
    await scriptEngine(marker, [{ status: 401 }]);
    const failed = await runDecision(ws, 'second', { message: 'fails' });
    expect(failed.status).toBe(502);
    secondOk = await runMany(ws, 'second', 2, 1);
    const all = await executions(ws, '?limit=100');
    failedId = all.body.data.find((e: { status: string }) => e.status === 'error').id;
  });

  it('answers 20 by default, newest first, with a cursor to the rest; never the input', async () => {
    const page = await executions(ws);
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(20);
    expect(page.body.has_more).toBe(true);
    expect(typeof page.body.next_cursor).toBe('string');
    // Newest first: the two last successful runs of `second` lead, the failed one follows.
    expect(page.body.data.slice(0, 3).map((e: { id: string }) => e.id)).toEqual([...secondOk].reverse().concat(failedId));
    const times = page.body.data.map((e: { created_at: string }) => Date.parse(e.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    for (const execution of page.body.data) {
      expect(Object.keys(execution)).not.toContain('input');
      expect(execution).toMatchObject({
        id: expect.stringMatching(/^exec_/),
        decision_id: expect.stringMatching(/^dec_/),
        source: 'api',
        livemode: true,
        version: 1,
      });
    }
  });

  it('takes limit from 1 to 100 and refuses anything else with 400 INVALID_REQUEST', async () => {
    const one = await executions(ws, '?limit=1');
    expect(one.body.data.map((e: { id: string }) => e.id)).toEqual([secondOk[1]]);
    expect(one.body.has_more).toBe(true);
    const hundred = await executions(ws, '?limit=100');
    expect(hundred.body.data).toHaveLength(24);
    expect(hundred.body).toMatchObject({ has_more: false, next_cursor: null });
    for (const limit of ['0', '101', '-1', 'abc', '1.5', '', '1e2', '%20']) {
      const refused = await executions(ws, `?limit=${limit}`);
      expectError(refused, 400, 'INVALID_REQUEST');
      expect(refused.body.error.details).toEqual([{ path: 'limit', message: expect.any(String) }]);
    }
  });

  it('filters by decision and by status, together or apart', async () => {
    const second = await executions(ws, '?decision=second');
    expect(second.body.data.map((e: { id: string }) => e.id)).toEqual([...secondOk].reverse().concat(failedId));
    const errors = await executions(ws, '?status=error');
    expect(errors.body.data.map((e: { id: string }) => e.id)).toEqual([failedId]);
    expect(errors.body.data[0].error).toEqual({ code: 'ENGINE_AUTH_FAILED', message: expect.any(String) });
    const firstOk = await executions(ws, '?decision=first&status=success&limit=100');
    expect(firstOk.body.data).toHaveLength(21);
    expect(new Set(firstOk.body.data.map((e: { id: string }) => e.id))).toEqual(new Set(firstIds));
    expect((await executions(ws, '?decision=first&status=error')).body.data).toEqual([]);
    expect((await executions(ws, '?decision=nobody')).body).toEqual({ data: [], has_more: false, next_cursor: null });
    expectError(await executions(ws, '?status=failed'), 400, 'INVALID_REQUEST');
  });

  it('pages with an opaque cursor that keeps its filters and refuses a forged one', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: any = await executions(ws, `?limit=5&decision=first${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((e: { id: string }) => e.id));
      cursor = page.body.next_cursor;
      if (cursor !== null) {
        expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(firstIds.some((id) => cursor!.includes(id))).toBe(false);
      }
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(5);
    expect(seen).toHaveLength(21);
    expect(new Set(seen)).toEqual(new Set(firstIds));
    for (const forged of ['garbage', Buffer.from('e:abc').toString('base64url'), Buffer.from('x:12').toString('base64url')]) {
      expectError(await executions(ws, `?cursor=${forged}`), 400, 'INVALID_REQUEST');
    }
  });
});

describe('executions of concurrent runs', () => {
  it('lists each run the moment it has answered, with dozens running at once', async () => {
    const ws = await roomyWorkspace();
    await deployedDecision(ws, 'burst', triageSchema());
    const unlisted: string[] = [];
    const answered: string[] = [];
    await Promise.all(
      Array.from({ length: 30 }, async (_, n) => {
        const reply = await runDecision(ws, 'burst', { message: `burst ${n}` });
        expect(reply.status).toBe(200);
        answered.push(reply.body.execution_id);
        const listed = await executions(ws, '?decision=burst&limit=100');
        if (!listed.body.data.some((execution: { id: string }) => execution.id === reply.body.execution_id)) unlisted.push(reply.body.execution_id);
      }),
    );
    expect(unlisted).toEqual([]);
    const all = await executions(ws, '?decision=burst&limit=100');
    expect(new Set(all.body.data.map((execution: { id: string }) => execution.id))).toEqual(new Set(answered));
  });
});

describe('cursor paging while runs keep arriving', () => {
  it('neither repeats nor skips any row older than the first page', async () => {
    const ws = await roomyWorkspace();
    await deployedDecision(ws, 'busy', triageSchema());
    const before = new Set(await runMany(ws, 'busy', 30));

    let writing = true;
    const during: Array<{ id: string; at: number }> = [];
    const writers = Array.from({ length: 3 }, async () => {
      while (writing) {
        const reply = await runDecision(ws, 'busy', { message: 'meanwhile' });
        if (reply.status === 200) during.push({ id: reply.body.execution_id, at: Date.now() });
      }
    });

    const paged: string[] = [];
    const pageTimes: number[] = [];
    let cursor: string | null = null;
    try {
      do {
        // Let the writers insert between pages, so the cursor has to hold against new rows.
        await new Promise((resolve) => setTimeout(resolve, 80));
        const page: any = await executions(ws, `?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(page.status).toBe(200);
        pageTimes.push(Date.now());
        paged.push(...page.body.data.map((e: { id: string }) => e.id));
        cursor = page.body.next_cursor;
      } while (cursor !== null && pageTimes.length < 50);
    } finally {
      writing = false;
      await Promise.all(writers);
    }

    expect(cursor).toBeNull();
    expect(new Set(paged).size).toBe(paged.length);
    for (const id of before) expect(paged.filter((seen) => seen === id)).toHaveLength(1);
    // The loop above reads at least one page.
    const firstPageAt = pageTimes[0]!;
    const lastPageAt = pageTimes[pageTimes.length - 1]!;
    // The writers really did insert while the pages were read.
    const insertedWhilePaging = during.filter((run) => run.at > firstPageAt && run.at < lastPageAt);
    expect(insertedWhilePaging.length).toBeGreaterThan(0);
    // Rows that arrived after the first page are newer than every cursor, so no later page shows them.
    const arrivedLate = new Set(during.filter((run) => run.at > firstPageAt).map((run) => run.id));
    const firstPage = new Set(paged.slice(0, 7));
    expect(paged.filter((id) => arrivedLate.has(id) && !firstPage.has(id))).toEqual([]);
  });
});

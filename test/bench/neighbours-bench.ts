import { fork } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { Client } from 'pg';
import { startOwnCluster } from '../e2e/support/cluster';
import { triageSchema } from '../e2e/support/schemas';
import { intEnv, LABELLED_ANSWERS, LABELLED_DISTRIBUTIONS, LABELLED_DRAWS, percentile, say } from './bench-support';

/**
 * `npm run bench:neighbours`: whether one workspace's calibration fits slow another workspace's live runs. A cluster
 * of its own (fresh database, private NATS, the engine simulator, the all-in-one launcher) gets two workspaces on
 * the enterprise plan (BENCH_FIT_PLAN changes A's). Workspace A's deployed decision gets BENCH_OUTCOMES (3,001)
 * live executions with distributions and outcomes, written straight into the runner's table. Workspace B's live
 * runs are then timed, BENCH_CLIENTS (2) at a time, in phases of BENCH_PHASE_S (15) seconds that alternate:
 * B alone, then B while BENCH_LOOPS (16) loops in A each ask for a fit, wait for its answer and ask again (refused
 * ones too), BENCH_ROUNDS (2) times; the loops run in a process of their own, as another client would. Alternating
 * keeps a machine shared with other work from favouring either side. Prints B's p50 and p95 alone and under the loops, their ratio, B's failures, and A's fits done and refused.
 */

const OUTCOMES = intEnv('BENCH_OUTCOMES', 3_001);
const LOOPS = intEnv('BENCH_LOOPS', 16);
const CLIENTS = intEnv('BENCH_CLIENTS', 2);
const PHASE_S = intEnv('BENCH_PHASE_S', 15);
const ROUNDS = intEnv('BENCH_ROUNDS', 2);
const FIT_PLAN = process.env.BENCH_FIT_PLAN ?? 'enterprise';
/** `read`: the loops read A's decision instead, the same number of application requests with no fit: the floor. */
const LOOP_KIND = process.env.BENCH_LOOP_KIND === 'read' ? 'read' : 'fit';
const ADMIN_TOKEN = 'bench-admin-token-0123456789';

interface Workspace {
  id: string;
  session: string;
  key: string;
  decisionId: string;
}

async function http(method: string, url: string, token: string | null, body?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: response.status, body: parsed };
}

async function must(what: string, reply: Promise<{ status: number; body: any }>, expected: number): Promise<any> {
  const { status, body } = await reply;
  if (status !== expected) throw new Error(`${what} answered ${status}: ${JSON.stringify(body)}`);
  return body;
}

async function workspace(base: string, name: string, plan: string, overrides?: Record<string, number>): Promise<Workspace> {
  const email = `neighbours-${Date.now()}-${name}@example.com`;
  const session = (await must('sign-up', http('POST', `${base}/app/v1/auth/sign-up`, null, { email, password: 'benchpassword42', name: 'Bench' }), 201)).session
    .token as string;
  const created = await must('workspace', http('POST', `${base}/app/v1/workspaces`, session, { name }), 201);
  // The plan's own limits, so that the loops meet the rate limit and the fit budget a real workspace would.
  await must('plan', http('PUT', `${base}/admin/v1/workspaces/${created.id}/plan`, ADMIN_TOKEN, overrides ? { plan, overrides } : { plan }), 200);
  const key = (await must('api key', http('POST', `${base}/app/v1/workspaces/${created.id}/api-keys`, session, { name: 'bench', mode: 'live' }), 201)).key;
  const decision = await must(
    'decision',
    http('POST', `${base}/app/v1/workspaces/${created.id}/decisions`, session, { slug: 'triage', name: 'Triage', schema: triageSchema(`bench ${name}`) }),
    201,
  );
  await must('deploy', http('POST', `${base}/app/v1/workspaces/${created.id}/decisions/${decision.id}/deploy`, session), 201);
  return { id: created.id, session, key, decisionId: decision.id };
}

/** OUTCOMES live executions of A's version 1, each with its three distributions and an outcome for every question. */
async function seedOutcomes(databaseUrl: string, a: Workspace): Promise<void> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query(
      `INSERT INTO decision_runner.executions (id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode,
                                               result, confidence, action, action_reason, distributions, outcome)
       SELECT 'exec_nb' || lpad(i::text, 18, '0'), $1, $2, 'triage', 1, 'api', 'success', 'req_bench', true,
              '{}'::jsonb, '{}'::jsonb, 'escalate', '{"type":"default"}'::jsonb,
              ${LABELLED_DISTRIBUTIONS},
              jsonb_build_object('answers', ${LABELLED_ANSWERS},
                                 'action', null, 'recorded_at', now())
         FROM ${LABELLED_DRAWS('$3')}`,
      [a.id, a.decisionId, OUTCOMES],
    );
    await db.query('ANALYZE decision_runner.executions');
  } finally {
    await db.end();
  }
}

interface PhaseFigures {
  latencies: number[];
  statuses: Map<number, number>;
}

/** B's live runs for `seconds`, CLIENTS at a time, each timed from request to the end of its answer. */
async function liveRuns(base: string, b: Workspace, seconds: number): Promise<PhaseFigures> {
  const figures: PhaseFigures = { latencies: [], statuses: new Map() };
  const until = Date.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < until) {
        const started = performance.now();
        let status: number;
        try {
          status = (await http('POST', `${base}/v1/decisions/triage`, b.key, { state: { message: `case ${n++}`, amount: 10 } })).status;
        } catch {
          status = 0;
        }
        figures.latencies.push(performance.now() - started);
        figures.statuses.set(status, (figures.statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  return figures;
}

/**
 * A's loops in a process of their own, as another client machine would be: B's timings are then never delayed by
 * this process reading A's answers. Answers the counts by status once told to stop.
 */
function loopsElsewhere(base: string, a: Workspace): { stop: () => Promise<Map<number, number>> } {
  const child = fork(__filename, ['--loops'], { env: { ...process.env, BENCH_LOOPS_TARGET: JSON.stringify({ base, a }) } });
  const counted = new Promise<Map<number, number>>((resolve, reject) => {
    child.once('message', (counts: Array<[number, number]>) => resolve(new Map(counts)));
    child.once('exit', (code) => reject(new Error(`the loops exited with ${code} before answering`)));
  });
  counted.catch(() => undefined);
  return {
    stop: async () => {
      child.send('stop');
      return counted;
    },
  };
}

/** `neighbours-bench.js --loops`: runs A's loops until the parent says stop, then sends it the counts. */
async function loopsMain(): Promise<void> {
  const { base, a } = JSON.parse(process.env.BENCH_LOOPS_TARGET!) as { base: string; a: Workspace };
  let stopped = false;
  process.on('message', () => (stopped = true));
  const counts = await fitLoops(base, a, () => stopped);
  process.send!([...counts], () => process.exit(0));
}

/** LOOPS loops in A, each asking for a fit and waiting for its answer, until `stop` says so; counts answers by status. */
function fitLoops(base: string, a: Workspace, stop: () => boolean): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  const url = `${base}/app/v1/workspaces/${a.id}/decisions/${a.decisionId}`;
  return Promise.all(
    Array.from({ length: LOOPS }, async () => {
      while (!stop()) {
        let status: number;
        try {
          status = (LOOP_KIND === 'fit' ? await http('POST', `${url}/calibration`, a.session, { version: 1 }) : await http('GET', url, a.session)).status;
        } catch {
          status = 0;
        }
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  ).then(() => statuses);
}

function merge(into: Map<number, number>, from: Map<number, number>): void {
  for (const [status, count] of from) into.set(status, (into.get(status) ?? 0) + count);
}

function describe(phase: string, figures: PhaseFigures): string {
  const sorted = [...figures.latencies].sort((x, y) => x - y);
  const failed = figures.latencies.length - (figures.statuses.get(200) ?? 0);
  return `${phase.padEnd(22)} runs ${String(sorted.length).padStart(5)}  p50 ${percentile(sorted, 50).toFixed(1).padStart(7)} ms  p95 ${percentile(sorted, 95)
    .toFixed(1)
    .padStart(7)} ms  failed ${failed}`;
}

async function main(): Promise<void> {
  say(
    `neighbours bench: ${cpus().length} cores, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  say(
    `  A: ${OUTCOMES} labelled executions, ${LOOPS} ${LOOP_KIND} loops (plan ${FIT_PLAN}); B: ${CLIENTS} clients; ${ROUNDS} rounds of ${PHASE_S} s alone, ${PHASE_S} s under the loops`,
  );
  const own = await startOwnCluster('neighbours-bench', { ADMIN_TOKEN, LOG_LEVEL: 'warn' });
  try {
    const base = own.cluster.baseUrl;
    const a = await workspace(base, 'a', FIT_PLAN);
    // On a quiet machine B's two clients run faster than the enterprise plan's 10,000 a minute: the window would
    // answer them 429, which is B's own limit, not A's doing.
    const b = await workspace(base, 'b', 'enterprise', { rate_limit_per_minute: 1_000_000 });
    await seedOutcomes(own.databaseUrl, a);
    // One fit alone, for what a fit over the seeded outcomes answers and how long it takes.
    const single = performance.now();
    const probe = await must(
      'probe fit',
      http('POST', `${base}/app/v1/workspaces/${a.id}/decisions/${a.decisionId}/calibration`, a.session, { version: 1 }),
      200,
    );
    say(
      `  one fit alone: ${(performance.now() - single).toFixed(0)} ms, ${probe.fitted.length} maps over ${probe.fitted.map((fit: { outcomes: number }) => fit.outcomes).join(', ')} outcomes`,
    );
    // Warm the run path (caches, prepared statements, the optimising compiler) before anything is measured.
    await liveRuns(base, b, 5);

    const alone: PhaseFigures = { latencies: [], statuses: new Map() };
    const loaded: PhaseFigures = { latencies: [], statuses: new Map() };
    const fits = new Map<number, number>();
    for (let round = 1; round <= ROUNDS; round++) {
      const quiet = await liveRuns(base, b, PHASE_S);
      say(`  ${describe(`round ${round}: B alone`, quiet)}`);
      const loops = loopsElsewhere(base, a);
      // The loops' process has started and its first fits are under way before B is timed.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const busy = await liveRuns(base, b, PHASE_S);
      const answered = await loops.stop();
      say(`  ${describe(`round ${round}: B + A's loops`, busy)}  A: ${[...answered].map(([status, count]) => `${count}×${status}`).join(', ')}`);
      alone.latencies.push(...quiet.latencies);
      merge(alone.statuses, quiet.statuses);
      loaded.latencies.push(...busy.latencies);
      merge(loaded.statuses, busy.statuses);
      merge(fits, answered);
    }
    const p50 = (figures: PhaseFigures) =>
      percentile(
        [...figures.latencies].sort((x, y) => x - y),
        50,
      );
    const failures = (figures: PhaseFigures) => figures.latencies.length - (figures.statuses.get(200) ?? 0);
    say('');
    say(describe('B alone, all rounds', alone));
    say(describe(`B + A's ${LOOP_KIND} loops`, loaded));
    say(`p50 under the loops / p50 alone: ${(p50(loaded) / p50(alone)).toFixed(2)} (target at most 1.25)`);
    say(
      `B's failures: ${failures(alone)} alone, ${failures(loaded)} under the loops; statuses under the loops: ${JSON.stringify(Object.fromEntries(loaded.statuses))}`,
    );
    const refused = [...fits].filter(([status]) => status !== 200).reduce((sum, [, count]) => sum + count, 0);
    say(`A's ${LOOP_KIND} requests: ${fits.get(200) ?? 0} done, ${refused} refused (${[...fits].map(([status, count]) => `${count}×${status}`).join(', ')})`);
  } finally {
    await own.stop();
  }
}

(process.argv.includes('--loops') ? loopsMain() : main()).catch((error: unknown) => {
  say(`bench:neighbours failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});

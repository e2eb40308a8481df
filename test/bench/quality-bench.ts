import { RpcClient } from '@ds/platform';
import { cpus, loadavg } from 'node:os';
import { NormalizedSchema, normalizeSchema } from '@ds/decision-schema';
import { decisionRunner } from '../../apps/decision-runner/src/main';
import { VersionCache } from '../../apps/decision-runner/src/decisions/version-cache';
import { QualityService } from '../../apps/decision-runner/src/quality/quality.service';
import { LabLimits } from '../../apps/decision-runner/src/lab/lab-limits.store';
import { LabGate, LabPool } from '../../apps/decision-runner/src/lab/lab-pool';
import { migratedDatabase } from '../support/service-database';
import { LABELLED_ANSWERS, LABELLED_DISTRIBUTIONS, LABELLED_DRAWS, say } from './bench-support';
import { DecisionStore } from '../../apps/decision-runner/src/decisions/decision.store';
import { QualityStore } from '../../apps/decision-runner/src/quality/quality.store';

/** Only the report is read here; a fit would ask the ledger for the plan. */
const NO_LEDGER = {
  call: async () => {
    throw new Error('no ledger here');
  },
} as unknown as RpcClient;

/**
 * `npm run bench:quality`: the quality report over a million executions with outcomes. A fresh test database gets
 * the runner's migrations, one decision with a choice, a score and a probability question, and EXECUTIONS
 * executions of its version 1, each with its distributions, an outcome and the labels recording that outcome
 * writes (three answers and the action: four labels per execution); the labels' triggers fill the day and hour
 * rollups as they do for outcomes recorded one by one. The report is then asked for REPEATS times through the
 * runner's own QualityService, without a range, for a range of whole days (what the Quality tab asks) and for a
 * range of timestamps whose first and last days and hours are partial; the first (cold) and the median of the rest
 * are printed for each. Then 2 % of the executions become resolved audit samples and 10 % low-confidence review
 * items, and the report's audit figures of a version with review on are asked for as the report is.
 */

const EXECUTIONS = Number(process.env.QUALITY_BENCH_EXECUTIONS ?? 1_000_000);
const REPEATS = 7;

const SCHEMA = normalizeSchema({
  state: { type: 'object', fields: { message: { type: 'string', required: true } } },
  questions: [
    { key: 'intent', kind: 'choice', instructions: 'What does `message` want?', options: [{ value: 'refund' }, { value: 'exchange' }], minConfidence: 0.4 },
    { key: 'urgency', kind: 'score', instructions: 'How upset is `message`?', levels: ['calm', 'annoyed', 'furious'] },
    { key: 'fraud', kind: 'probability', instructions: 'Judge `message`.', criterion: 'The request shows signs of fraud' },
  ],
  fallbackAction: 'escalate',
});

/** The same decision sending low-confidence runs to review and auditing 2 % of the rest. */
const REVIEWED_SCHEMA: NormalizedSchema = {
  ...SCHEMA,
  settings: {
    ...SCHEMA.settings,
    storeInput: true,
    review: { when: { actions: [], lowConfidence: true, engineError: false }, auditRate: 0.02, dueMinutes: 240 },
  },
};

async function main(): Promise<void> {
  say(`quality bench: ${EXECUTIONS.toLocaleString('en-US')} executions with outcomes; ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)}`);
  const database = await migratedDatabase('quality_bench', decisionRunner.database, 4);
  try {
    const db = database.dataSource;
    // The bulk load runs on one connection without the service's statement timeout; the report keeps it.
    const loader = db.createQueryRunner();
    await loader.connect();
    await loader.query('SET statement_timeout = 0');
    await loader.query(
      `INSERT INTO decisions (id, workspace_id, slug, name, draft_schema, revision, active_version, endpoint_enabled)
       VALUES ('dec_bench', 'ws_bench', 'bench', 'Bench', $1, 1, 1, true)`,
      [SCHEMA],
    );
    await loader.query(`INSERT INTO decision_versions (decision_id, version, schema) VALUES ('dec_bench', 1, $1)`, [SCHEMA]);

    let started = performance.now();
    // The draws and what they mean: LABELLED_DRAWS in bench-support.
    await loader.query(
      `INSERT INTO executions (id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode,
                               result, confidence, action, action_reason, distributions, outcome, created_at)
       SELECT 'exec_' || lpad(i::text, 20, '0'), 'ws_bench', 'dec_bench', 'bench', 1, 'api', 'success', 'req_bench', true,
              '{}'::jsonb, '{}'::jsonb, 'continue', '{"type":"default"}'::jsonb,
              ${LABELLED_DISTRIBUTIONS},
              jsonb_build_object('answers', ${LABELLED_ANSWERS},
                                 'action', CASE WHEN r1 < 0.7 THEN 'continue' ELSE 'block' END, 'recorded_at', now()),
              now() - (i % 86400) * interval '1 second'
         FROM ${LABELLED_DRAWS('$1')}`,
      [EXECUTIONS],
    );
    say(`  executions written in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    started = performance.now();
    // The labels recording each outcome writes (OutcomesService), derived here in one statement for speed.
    await loader.query(
      `INSERT INTO quality_labels (execution_id, decision_id, version, executed_at, question, kind, source, confidence, predicted, observed, correct)
       SELECT e.id, e.decision_id, e.version, e.created_at, q.question, q.kind, 'model', q.confidence, q.predicted, q.observed, q.correct
         FROM executions e,
              LATERAL (SELECT (e.distributions #>> '{model,intent,refund}')::float8 AS p,
                              (e.distributions #>> '{model,urgency,annoyed}')::float8 AS l,
                              (e.distributions #>> '{model,fraud,yes}')::float8 AS y) AS d,
              LATERAL (VALUES
                ('intent', 'choice', 1 + (d.p * ln(d.p) + (1 - d.p) * ln(greatest(1 - d.p, 1e-12))) / ln(3), d.p,
                 e.outcome #>> '{answers,intent}' = 'refund', e.outcome #>> '{answers,intent}' = 'refund'),
                ('urgency', 'score', 1 + (d.l * ln(d.l) + (1 - d.l) * ln((1 - d.l) / 2)) / ln(3), d.l,
                 e.outcome #>> '{answers,urgency}' = 'annoyed', e.outcome #>> '{answers,urgency}' = 'annoyed'),
                ('fraud', 'probability', abs(2 * d.y - 1), d.y,
                 (e.outcome #>> '{answers,fraud}')::boolean, (d.y >= 0.5) = (e.outcome #>> '{answers,fraud}')::boolean),
                ('', 'action', NULL, NULL, NULL, e.action = e.outcome ->> 'action')
              ) AS q(question, kind, confidence, predicted, observed, correct)
        WHERE e.decision_id = 'dec_bench'`,
    );
    await loader.query('VACUUM ANALYZE quality_labels');
    await loader.query('VACUUM ANALYZE quality_rollups');
    await loader.release();
    const [{ count }] = (await db.query('SELECT count(*)::int AS count FROM quality_labels')) as [{ count: number }];
    say(`  ${count.toLocaleString('en-US')} labels and their rollups written and vacuumed in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const [{ rollups }] = (await db.query('SELECT count(*)::int AS rollups FROM quality_rollups')) as [{ rollups: number }];
    say(`  ${rollups.toLocaleString('en-US')} rollup rows (days and hours)`);

    const service = new QualityService(
      DecisionStore.of(db),
      new QualityStore(db),
      NO_LEDGER,
      new VersionCache(db),
      new LabLimits(db),
      new LabPool(1),
      new LabGate(1),
    );
    const day = (offset: number) => new Date(Math.floor(Date.now() / 86_400_000 + offset) * 86_400_000).toISOString().slice(0, 10);
    const ranges: Array<[string, string | undefined, string | undefined]> = [
      ['every execution', undefined, undefined],
      [`whole days ${day(-1)} to ${day(1)}`, day(-1), day(1)],
      // 20 h 17 min ago to 1 h 43 min ago: a partial day and partial hours at both ends.
      ['timestamps with partial days and hours', new Date(Date.now() - 73_020_000).toISOString(), new Date(Date.now() - 6_180_000).toISOString()],
    ];
    for (const [name, from, to] of ranges) {
      const timings: number[] = [];
      let report: Record<string, unknown> = {};
      for (let i = 0; i < REPEATS; i++) {
        const t0 = performance.now();
        report = await service.report({ workspaceId: 'ws_bench', decisionId: 'dec_bench', version: undefined, from, to });
        timings.push(performance.now() - t0);
      }
      const warm = timings.slice(1).sort((a, b) => a - b);
      const questions = report.questions as Array<{ key: string; labelled: number; sources: { model: { ece: number } } }>;
      say(
        `  report, ${name}: cold ${timings[0]!.toFixed(0)} ms, warm median ${warm[Math.floor(warm.length / 2)]!.toFixed(0)} ms (${warm.map((t) => t.toFixed(0)).join(', ')})`,
      );
      say(`    ${questions.map((q) => `${q.key}: ${q.labelled.toLocaleString('en-US')} labelled, ECE ${q.sources.model.ece.toFixed(3)}`).join('; ')}`);
    }

    // Review items: every 50th execution a resolved audit sample (its outcome the audit's), every 10th one more a
    // low-confidence item; each with a confidence per question.
    const items = db.createQueryRunner();
    await items.connect();
    await items.query('SET statement_timeout = 0');
    await items.query(
      `UPDATE executions SET confidence = jsonb_build_object('intent', ((hashtext(id) & 1023) / 1023.0)::float8, 'urgency', 0.5, 'fraud', 0.8),
              action_reason = CASE WHEN right(id, 1) = '1' THEN '{"type":"low_confidence","question":"intent"}'::jsonb ELSE action_reason END,
              outcome = CASE WHEN right(id, 2) IN ('00', '50') THEN outcome || '{"source":"audit"}'::jsonb ELSE outcome END
        WHERE right(id, 2) IN ('00', '50') OR right(id, 1) = '1'`,
    );
    await items.query(
      `INSERT INTO review_items (id, workspace_id, decision_id, decision_slug, version, execution_id, reason, executed_at, due_at, resolved_at, resolved_by)
       SELECT 'rev_' || substr(id, 6), workspace_id, decision_id, decision_slug, version, id,
              CASE WHEN right(id, 1) = '1' THEN 'low_confidence' ELSE 'audit' END, created_at, created_at + interval '4 hours',
              CASE WHEN right(id, 1) = '1' THEN NULL ELSE created_at + interval '1 hour' END, CASE WHEN right(id, 1) = '1' THEN NULL ELSE 'usr_bench' END
         FROM executions WHERE right(id, 2) IN ('00', '50') OR right(id, 1) = '1'`,
    );
    await items.query('VACUUM ANALYZE executions');
    await items.query('VACUUM ANALYZE review_items');
    await items.release();
    for (const [name, from, to] of ranges.slice(0, 2)) {
      const timings: number[] = [];
      let audit: Awaited<ReturnType<QualityService['audit']>> = null;
      for (let i = 0; i < REPEATS; i++) {
        const t0 = performance.now();
        audit = await service.audit('dec_bench', 1, REVIEWED_SCHEMA, from ? new Date(from) : null, to ? new Date(to) : null);
        timings.push(performance.now() - t0);
      }
      const warm = timings.slice(1).sort((a, b) => a - b);
      say(
        `  audit figures, ${name}: cold ${timings[0]!.toFixed(0)} ms, warm median ${warm[Math.floor(warm.length / 2)]!.toFixed(0)} ms (${warm.map((t) => t.toFixed(0)).join(', ')})`,
      );
      say(
        `    ${audit!.runs.toLocaleString('en-US')} runs, ${audit!.reviewed.audit.toLocaleString('en-US')} audits, automation ${audit!.automation_rate?.toFixed(3)}, action accuracy ${audit!.action.accuracy?.toFixed(3)} [${audit!.action.interval?.low.toFixed(3)}, ${audit!.action.interval?.high.toFixed(3)}]`,
      );
    }
  } finally {
    await database.drop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});

import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EXECUTION_SOURCES_SQL, FitCalibrationRequest, QualityReportRequest, ServiceError, SUBJECTS, ValidationIssue } from '@ds/contracts';
import {
  Calibration,
  CalibrationFit,
  FIT_LEASE_SECONDS,
  FIT_SAMPLE_MAX,
  fitDailyCap,
  fitRestSeconds,
  NormalizedSchema,
  ParsedValue,
  parseInstant,
  parseVersionNumber,
  parseVersionText,
  QualityCell,
  qualityReport,
  ReportTerm,
  reportTerms,
  secondsUntilNextUtcDay,
  validateSchema,
} from '@ds/decision-schema';
import { PLATFORM, RpcClient, rowsReturned } from '@ds/platform';
import { DecisionEntity } from '../entities';
import { VersionCache } from '../decisions/version-cache';
import { LabLimits } from '../lab/lab-limits';
import { LabGate, LabPool } from '../lab/lab-pool';
import { DecisionStore } from '../decisions/decision.store';

/**
 * What one label adds to its cell, as numeric: the same values the rollup's triggers add, so days read from the
 * rollup and stretches read from the labels sum exactly alike.
 */
const LABEL_CELL = `
  question, kind, source,
  CASE WHEN predicted IS NULL THEN -1 ELSE least(floor(predicted * 10), 9) END::smallint AS bin,
  CASE WHEN confidence IS NULL THEN -1 ELSE least(floor(confidence * 20), 19) END::smallint AS step,
  1 AS count,
  coalesce(predicted::numeric, 0) AS predicted,
  coalesce(observed::int, 0) AS observed,
  correct::int AS correct,
  CASE WHEN kind = 'probability' THEN ((predicted - observed::int) ^ 2)::numeric ELSE 0 END AS brier,
  CASE WHEN kind = 'probability'
       THEN (-ln(CASE WHEN observed THEN least(greatest(predicted, 1e-6), 1 - 1e-6)
                      ELSE 1 - least(greatest(predicted, 1e-6), 1 - 1e-6) END))::numeric
       ELSE 0 END AS log_loss`;

const CELL_SUMS = ['count', 'predicted', 'observed', 'correct', 'brier', 'log_loss'];

/**
 * The report's cells (at most 10 bins × 20 confidence steps per question and source) over the terms of a range:
 * whole days and hours from quality_rollups, partial hours from quality_labels, each added or subtracted. `terms` is not empty.
 */
export function reportCellsQuery(terms: readonly ReportTerm[]): { sql: string; parameters: unknown[] } {
  const parameters: unknown[] = [];
  // $1 and $2 are the decision and the version.
  const parameter = (value: unknown) => `$${parameters.push(value) + 2}`;
  const parts = terms.map((term) => {
    const sums = CELL_SUMS.map((column) => (term.sign === 1 ? column : `-${column}`)).join(', ');
    const conditions = ['decision_id = $1', 'version = $2'];
    if (term.read !== 'labels') {
      conditions.push(`grain = ${term.read === 'days' ? 86_400 : 3_600}`);
      if (term.from) conditions.push(`bucket >= ${parameter(term.from)}`);
      if (term.to) conditions.push(`bucket < ${parameter(term.to)}`);
      return `SELECT question, kind, source, bin, step, ${sums} FROM quality_rollups WHERE ${conditions.join(' AND ')}`;
    }
    conditions.push(`executed_at >= ${parameter(term.from)}`, `executed_at < ${parameter(term.to)}`);
    return `SELECT question, kind, source, bin, step, ${sums} FROM (SELECT ${LABEL_CELL} FROM quality_labels WHERE ${conditions.join(' AND ')}) AS labels`;
  });
  return {
    sql: `SELECT question, kind, source, nullif(bin, -1)::int AS bin, nullif(step, -1)::int AS step,
                 sum(count)::int AS count, sum(predicted)::float8 AS predicted, sum(observed)::int AS observed,
                 sum(correct)::int AS correct, sum(brier)::float8 AS brier, sum(log_loss)::float8 AS log_loss
            FROM (${parts.join('\n UNION ALL \n')}) AS terms
           GROUP BY 1, 2, 3, 4, 5
          -- A subtracted stretch leaves a cell at zero rather than removing it.
          HAVING sum(count) <> 0
           ORDER BY 1, 2, 3, 4, 5`,
    parameters,
  };
}

@Injectable()
export class QualityService {
  /** Workspaces with a fit running in this process. */
  private readonly fitting = new Set<string>();

  private readonly decisions: DecisionStore;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    private readonly versions: VersionCache,
    private readonly limits: LabLimits,
    private readonly pool: LabPool,
    private readonly gate: LabGate,
  ) {
    this.decisions = DecisionStore.of(db);
  }

  async report(request: QualityReportRequest): Promise<Record<string, unknown>> {
    const decision = await this.decisions.require(request);
    const issues: ValidationIssue[] = [];
    const from = instantOrNull(request.from, 'from', issues);
    const to = instantOrNull(request.to, 'to', issues);
    const version = request.version === undefined ? decision.activeVersion : checked(parseVersionText(request.version, 'version'), issues);
    if (issues.length > 0) throw new ServiceError('INVALID_REQUEST', 'The query parameters are not valid.', issues);
    if (version === null) throw new ServiceError('DECISION_NOT_DEPLOYED', 'The decision has never been deployed: name a version.');
    const schema = await this.version(decision, version);
    const [cells, outcomesByVersion] = await Promise.all([this.cells(decision.id, version, from, to), this.outcomesByVersion(decision.id)]);
    return {
      decision_id: decision.id,
      version,
      from: from?.toISOString() ?? null,
      to: to?.toISOString() ?? null,
      ...qualityReport(schema, cells),
      outcomes_by_version: outcomesByVersion,
    };
  }

  /**
   * The versions whose live runs have outcomes, newest first, with how many (whatever the range): so a report of a
   * version without any can say where they are. Read from the partial index of executions with an outcome.
   */
  async outcomesByVersion(decisionId: string): Promise<Array<{ version: number; outcomes: number }>> {
    const rows: Array<{ version: number; outcomes: string }> = await this.db.query(
      `SELECT version, count(*) AS outcomes FROM executions
        WHERE decision_id = $1 AND outcome IS NOT NULL AND version >= 1 AND source IN (${EXECUTION_SOURCES_SQL})
        GROUP BY version ORDER BY version DESC`,
      [decisionId],
    );
    return rows.map((row) => ({ version: Number(row.version), outcomes: Number(row.outcomes) }));
  }

  /** The cells of [from, to): whole days and hours from the rollup, the rest from the labels (`rollup` false: all from the labels). */
  async cells(decisionId: string, version: number, from: Date | null, to: Date | null, rollup = true): Promise<QualityCell[]> {
    const terms: ReportTerm[] = rollup
      ? reportTerms(from, to)
      : [{ read: 'labels', from: from ?? new Date(0), to: to ?? new Date('9999-12-31T00:00:00Z'), sign: 1 }];
    if (terms.length === 0) return [];
    const query = reportCellsQuery(terms);
    return (await this.db.query(query.sql, [decisionId, version, ...query.parameters])) as QualityCell[];
  }

  /**
   * Fits each question of `version` with enough outcomes, per confidence source, and writes the maps into the
   * draft (a new revision). Questions the draft no longer has in the same form keep no map and are listed.
   *
   * The request is checked first; then the workspace's turn (409 while another fit of the workspace runs: a
   * statement, nothing parsed), the draft, and the daily budget (429), before any labelled execution is read. The rows arrive as one text
   * value and are parsed, sampled and fitted on a lab thread.
   */
  async fit(request: FitCalibrationRequest): Promise<Record<string, unknown>> {
    // A workspace with a fit running in this process is refused before any I/O: a loop of refused fits costs next to nothing.
    if (this.fitting.has(request.workspaceId)) throw fitRunning();
    const decision = await this.decisions.require(request);
    const issues: ValidationIssue[] = [];
    const version = request.version === undefined || request.version === null ? null : checked(parseVersionNumber(request.version, 'version'), issues);
    if (version === null && issues.length === 0) issues.push({ path: 'version', message: 'is required' });
    if (issues.length > 0 || version === null) throw new ServiceError('INVALID_REQUEST', 'The calibration request is not valid.', issues);
    const schema = await this.version(decision, version);

    // The turn in PostgreSQL holds across replicas.
    const turn = await this.limits.takeTurn(request.workspaceId, 'fit', FIT_LEASE_SECONDS);
    if (turn.kind === 'running') throw fitRunning();
    if (turn.kind === 'resting') throw fitResting(turn.retryAfterSeconds);
    this.fitting.add(request.workspaceId);
    let restSeconds = 0;
    try {
      // Checked before the budget: a draft the caller must fix first spends no fit.
      const draft = validateSchema(decision.draftSchema);
      if (!draft.valid) throw new ServiceError('INVALID_SCHEMA', 'The draft is not valid; fix it before fitting a calibration into it.', draft.issues);
      // The plan is asked for only now, so that a refused fit never costs the ledger a call.
      const account = await this.rpc.call(SUBJECTS.billing.account, { workspaceId: request.workspaceId });
      const cap = fitDailyCap(account.plan.name);
      if (!(await this.limits.spend(request.workspaceId, 'fit', cap))) {
        const retryAfter = secondsUntilNextUtcDay(new Date());
        throw new ServiceError('RATE_LIMITED', `This plan allows ${cap} calibration fits a day; retry after ${retryAfter} seconds.`, { retryAfter });
      }
      let fit: CalibrationFit;
      const started = performance.now();
      try {
        fit = await this.pool.run({ kind: 'fit', version: schema, draft: draft.schema, executions: await this.labelledExecutions(decision.id, version) });
      } catch (error) {
        // Nothing the caller did: the run is given back.
        await this.limits.giveBack(request.workspaceId, 'fit');
        throw error;
      } finally {
        // The work was done, whatever its answer: the workspace rests in proportion to it.
        restSeconds = fitRestSeconds(performance.now() - started);
      }
      const revision = fit.fitted.length > 0 ? await this.saveCalibration(decision, draft.schema, fit.calibration) : decision.revision;
      return { version, revision, fitted: fit.fitted, not_fitted: fit.not_fitted };
    } finally {
      this.fitting.delete(request.workspaceId);
      await this.limits.endTurn(request.workspaceId, 'fit', turn.holder, restSeconds);
    }
  }

  /**
   * The newest FIT_SAMPLE_MAX live executions of a version with an outcome, oldest first, as one JSON text of
   * `[distributions, answers]` pairs: PostgreSQL writes it and the lab thread parses it.
   */
  private labelledExecutions(decisionId: string, version: number): Promise<string> {
    return this.gate.run(async () => {
      const [row] = (await this.db.query(
        `SELECT coalesce(json_agg(json_build_array(distributions, outcome->'answers') ORDER BY seq), '[]')::text AS executions
           FROM (SELECT seq, distributions, outcome FROM executions
                  WHERE decision_id = $1 AND version = $2 AND source IN (${EXECUTION_SOURCES_SQL}) AND outcome IS NOT NULL AND distributions IS NOT NULL
                  ORDER BY seq DESC LIMIT ${FIT_SAMPLE_MAX}) AS newest`,
        [decisionId, version],
      )) as Array<{ executions: string }>;
      return row?.executions ?? '[]';
    });
  }

  private async saveCalibration(decision: DecisionEntity, draft: NormalizedSchema, calibration: Calibration): Promise<number> {
    const checked = validateSchema({ ...draft, calibration });
    // The maps come from the fit and the questions from a valid draft: a refusal here is a bug, not the caller's.
    if (!checked.valid) throw new Error(`a fitted calibration does not validate: ${JSON.stringify(checked.issues)}`);
    const [saved] = rowsReturned<{ revision: number }>(
      await this.db.query(
        `UPDATE decisions SET draft_schema = $1, revision = revision + 1, updated_at = now()
          WHERE id = $2 AND workspace_id = $3 AND revision = $4 RETURNING revision`,
        [checked.schema, decision.id, decision.workspaceId, decision.revision],
      ),
    );
    if (!saved) throw new ServiceError('CONFLICT', 'The draft was saved by someone else meanwhile; fit again.');
    return saved.revision;
  }

  private async version(decision: DecisionEntity, version: number): Promise<NormalizedSchema> {
    // A shadow deployed from the draft is newer than the active version.
    const newest = Math.max(decision.activeVersion ?? 0, decision.latestVersion ?? 0);
    if (version > newest) throw new ServiceError('NOT_FOUND', `The decision has no version ${version}.`);
    return this.versions.get(decision.id, version);
  }
}

function fitResting(retryAfter: number): ServiceError {
  return new ServiceError('RATE_LIMITED', `This workspace fitted a calibration a moment ago; retry after ${retryAfter} seconds.`, { retryAfter });
}

function fitRunning(): ServiceError {
  return new ServiceError('CONFLICT', 'A calibration fit of this workspace is running; try again when it has finished.');
}

/** The value, or null with its issue added. */
function checked<T>(parsed: ParsedValue<T>, issues: ValidationIssue[]): T | null {
  if (parsed.ok) return parsed.value;
  issues.push(parsed.issue);
  return null;
}

function instantOrNull(value: unknown, path: string, issues: ValidationIssue[]): Date | null {
  return value === undefined ? null : checked(parseInstant(value, path), issues);
}

import { Inject, Injectable } from '@nestjs/common';
import { FitCalibrationRequest, QualityReportRequest, ServiceError, SUBJECTS, ValidationIssue } from '@ds/contracts';
import {
  auditReport,
  AuditReport,
  Calibration,
  CalibrationFit,
  FIT_LEASE_SECONDS,
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
import { PLATFORM, RpcClient } from '@ds/platform';
import { DecisionEntity } from '../entities';
import { VersionCache } from '../decisions/version-cache';
import { LabLimits } from '../lab/lab-limits.store';
import { LabGate, LabPool } from '../lab/lab-pool';
import { DecisionStore } from '../decisions/decision.store';
import { QualityStore } from './quality.store';

@Injectable()
export class QualityService {
  /** Workspaces with a fit running in this process. */
  private readonly fitting = new Set<string>();

  constructor(
    private readonly decisions: DecisionStore,
    private readonly quality: QualityStore,
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    private readonly versions: VersionCache,
    private readonly limits: LabLimits,
    private readonly pool: LabPool,
    private readonly gate: LabGate,
  ) {}

  async report(request: QualityReportRequest): Promise<Record<string, unknown>> {
    const decision = await this.decisions.require(request);
    const issues: ValidationIssue[] = [];
    const from = instantOrNull(request.from, 'from', issues);
    const to = instantOrNull(request.to, 'to', issues);
    const version = request.version === undefined ? decision.activeVersion : checked(parseVersionText(request.version, 'version'), issues);
    if (issues.length > 0) throw new ServiceError('INVALID_REQUEST', 'The query parameters are not valid.', issues);
    if (version === null) throw new ServiceError('DECISION_NOT_DEPLOYED', 'The decision has never been deployed: name a version.');
    const schema = await this.version(decision, version);
    const [cells, outcomesByVersion, audit] = await Promise.all([
      this.cells(decision.id, version, from, to),
      this.outcomesByVersion(decision.id),
      this.audit(decision.id, version, schema, from, to),
    ]);
    return {
      decision_id: decision.id,
      version,
      from: from?.toISOString() ?? null,
      to: to?.toISOString() ?? null,
      ...qualityReport(schema, cells),
      outcomes_by_version: outcomesByVersion,
      audit,
    };
  }

  /**
   * The audited figures of a version that sends runs to review (docs/reviews.md); null for one that does not. The
   * count of the range's runs reads every run, so it waits its turn at the lab gate with the other heavy reads.
   */
  async audit(decisionId: string, version: number, schema: NormalizedSchema, from: Date | null, to: Date | null): Promise<AuditReport | null> {
    if (schema.settings.review === undefined) return null;
    return auditReport(schema, await this.gate.run(() => this.quality.auditCounts(decisionId, version, from, to)));
  }

  /**
   * The versions whose live runs have outcomes, newest first, with how many (whatever the range): so a report of a
   * version without any can say where they are. Read from the partial index of executions with an outcome.
   */
  async outcomesByVersion(decisionId: string): Promise<Array<{ version: number; outcomes: number }>> {
    const rows = await this.quality.outcomesByVersion(decisionId);
    return rows.map((row) => ({ version: Number(row.version), outcomes: Number(row.outcomes) }));
  }

  /** The cells of [from, to): whole days and hours from the rollup, the rest from the labels (`rollup` false: all from the labels). */
  async cells(decisionId: string, version: number, from: Date | null, to: Date | null, rollup = true): Promise<QualityCell[]> {
    const terms: ReportTerm[] = rollup
      ? reportTerms(from, to)
      : [{ read: 'labels', from: from ?? new Date(0), to: to ?? new Date('9999-12-31T00:00:00Z'), sign: 1 }];
    if (terms.length === 0) return [];
    return this.quality.cells(decisionId, version, terms);
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
    return this.gate.run(() => this.quality.labelledExecutions(decisionId, version));
  }

  private async saveCalibration(decision: DecisionEntity, draft: NormalizedSchema, calibration: Calibration): Promise<number> {
    const checked = validateSchema({ ...draft, calibration });
    // The maps come from the fit and the questions from a valid draft: a refusal here is a bug, not the caller's.
    if (!checked.valid) throw new Error(`a fitted calibration does not validate: ${JSON.stringify(checked.issues)}`);
    const saved = await this.decisions.saveDraft({ decisionId: decision.id, workspaceId: decision.workspaceId }, checked.schema, decision.revision);
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

import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DecisionRef, FitCalibrationRequest, QualityReportRequest, ServiceError, ValidationIssue } from '@ds/contracts';
import {
  Calibration,
  CONFIDENCE_SOURCES,
  FitSample,
  fitQuestion,
  NormalizedSchema,
  outcomesOf,
  QualityCell,
  qualityReport,
  QuestionFit,
  RecordedDistributions,
  truthIndex,
  validateSchema,
} from '@ds/decision-schema';
import { rowsReturned } from '@ds/platform';
import { DecisionEntity } from '../entities';
import { VersionCache } from '../decisions/version-cache';

/**
 * Labels of one version grouped into at most 10 bins × 20 confidence steps per question and source: the database
 * does the counting over every labelled execution, the library turns the cells into the report.
 */
const REPORT_CELLS = `
  SELECT question, kind, source,
         CASE WHEN predicted IS NULL THEN NULL ELSE least(floor(predicted * 10), 9)::int END AS bin,
         CASE WHEN confidence IS NULL THEN NULL ELSE least(floor(confidence * 20), 19)::int END AS step,
         count(*)::int AS count,
         coalesce(sum(predicted), 0)::float8 AS predicted,
         (count(*) FILTER (WHERE observed))::int AS observed,
         (count(*) FILTER (WHERE correct))::int AS correct,
         coalesce(sum((predicted - observed::int) ^ 2) FILTER (WHERE kind = 'probability'), 0)::float8 AS brier,
         coalesce(sum(-ln(CASE WHEN observed THEN least(greatest(predicted, 1e-6), 1 - 1e-6)
                               ELSE 1 - least(greatest(predicted, 1e-6), 1 - 1e-6) END)) FILTER (WHERE kind = 'probability'), 0)::float8 AS log_loss
    FROM quality_labels
   WHERE decision_id = $1 AND version = $2 AND executed_at >= $3 AND executed_at < $4
   GROUP BY 1, 2, 3, 4, 5`;

/** The newest labelled executions a fit reads: enough for a stable map, bounded in time and memory. */
export const FIT_SAMPLE_MAX = 20_000;

type NotFitted = { question: string; source: string; outcomes: number; reason: 'not_enough_outcomes' | 'changed_in_draft'; needed?: number };

@Injectable()
export class QualityService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly versions: VersionCache,
  ) {}

  async report(request: QualityReportRequest): Promise<Record<string, unknown>> {
    const decision = await this.find(request);
    const issues: ValidationIssue[] = [];
    const from = timestamp(request.from, 'from', issues);
    const to = timestamp(request.to, 'to', issues);
    const version = request.version === undefined ? decision.activeVersion : versionNumber(request.version, issues);
    if (issues.length > 0) throw new ServiceError('INVALID_REQUEST', 'The query parameters are not valid.', issues);
    if (version === null) throw new ServiceError('DECISION_NOT_DEPLOYED', 'The decision has never been deployed: name a version.');
    const schema = await this.version(decision, version);
    const cells = (await this.db.query(REPORT_CELLS, [decision.id, version, from ?? new Date(0), to ?? new Date('9999-12-31T00:00:00Z')])) as QualityCell[];
    return {
      decision_id: decision.id,
      version,
      from: from?.toISOString() ?? null,
      to: to?.toISOString() ?? null,
      ...qualityReport(schema, cells),
    };
  }

  /**
   * Fits each question of `version` with enough outcomes, per confidence source, and writes the maps into the
   * draft (a new revision). Questions the draft no longer has in the same form keep no map and are listed.
   */
  async fit(request: FitCalibrationRequest): Promise<Record<string, unknown>> {
    const decision = await this.find(request);
    const issues: ValidationIssue[] = [];
    const version = versionNumber(request.version, issues);
    if (version === null) issues.push({ path: 'version', message: 'is required' });
    if (issues.length > 0 || version === null) throw new ServiceError('INVALID_REQUEST', 'The calibration request is not valid.', issues);
    const schema = await this.version(decision, version);
    const rows = (await this.db.query(
      `SELECT distributions, outcome->'answers' AS answers FROM executions
        WHERE decision_id = $1 AND version = $2 AND outcome IS NOT NULL AND distributions IS NOT NULL
        ORDER BY seq DESC LIMIT ${FIT_SAMPLE_MAX}`,
      [decision.id, version],
    )) as Array<{ distributions: RecordedDistributions; answers: Record<string, string | boolean> }>;

    const draft = validateSchema(decision.draftSchema);
    if (!draft.valid) throw new ServiceError('INVALID_SCHEMA', 'The draft is not valid; fix it before fitting a calibration into it.', draft.issues);
    const calibration: Calibration = structuredClone(draft.schema.calibration ?? {});
    const fitted: Array<QuestionFit & { source: string }> = [];
    const notFitted: NotFitted[] = [];
    for (const source of CONFIDENCE_SOURCES) {
      // Every question is listed for the model's own numbers; token probabilities only where some run recorded them.
      if (source !== 'model' && !rows.some((row) => row.distributions[source])) continue;
      for (const question of schema.questions) {
        // Token probabilities are read for choice and score questions only: a probability question never has them.
        if (source === 'tokens' && question.kind === 'probability') continue;
        const samples = samplesOf(schema, question.key, source, rows);
        const fit = fitQuestion(question, samples);
        if (fit.status !== 'fitted') {
          notFitted.push({ question: question.key, source, outcomes: fit.outcomes, reason: 'not_enough_outcomes', needed: fit.needed });
          continue;
        }
        const inDraft = draft.schema.questions.find((candidate) => candidate.key === question.key);
        if (!inDraft || inDraft.kind !== question.kind || outcomesOf(inDraft).join('\n') !== outcomesOf(question).join('\n')) {
          notFitted.push({ question: question.key, source, outcomes: fit.outcomes, reason: 'changed_in_draft' });
          continue;
        }
        (calibration[source] ??= {})[question.key] = fit.map;
        fitted.push({ ...fit, source });
      }
    }
    const revision = fitted.length > 0 ? await this.saveCalibration(decision, draft.schema, calibration) : decision.revision;
    return {
      version,
      revision,
      fitted: fitted.map(({ status: _status, ...fit }) => fit),
      not_fitted: notFitted,
    };
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

  private async find(ref: DecisionRef): Promise<DecisionEntity> {
    const decision = await this.db.getRepository(DecisionEntity).findOneBy({ id: ref.decisionId, workspaceId: ref.workspaceId });
    if (!decision) throw new ServiceError('NOT_FOUND', 'No such decision in this workspace.');
    return decision;
  }

  private async version(decision: DecisionEntity, version: number): Promise<NormalizedSchema> {
    // A shadow deployed from the draft is newer than the active version.
    const newest = Math.max(decision.activeVersion ?? 0, decision.latestVersion ?? 0);
    if (version > newest) throw new ServiceError('NOT_FOUND', `The decision has no version ${version}.`);
    return this.versions.get(decision.id, version);
  }
}

function samplesOf(
  schema: NormalizedSchema,
  key: string,
  source: (typeof CONFIDENCE_SOURCES)[number],
  rows: ReadonlyArray<{ distributions: RecordedDistributions; answers: Record<string, string | boolean> }>,
): FitSample[] {
  const question = schema.questions.find((candidate) => candidate.key === key)!;
  const outcomes = outcomesOf(question);
  const samples: FitSample[] = [];
  // Oldest first, so the folds of a cross-validation do not depend on how many newer rows arrived.
  for (const row of [...rows].reverse()) {
    const distribution = row.distributions[source]?.[key];
    const value = row.answers?.[key];
    if (!distribution || value === undefined) continue;
    const truth = truthIndex(question, value);
    if (truth < 0) continue;
    samples.push({ ps: outcomes.map((outcome) => distribution[outcome] ?? 0), truth });
  }
  return samples;
}

/** A version query parameter or body field: a positive integer, or absent (null). */
function versionNumber(value: unknown, issues: ValidationIssue[]): number | null {
  if (value === undefined || value === null) return null;
  const number = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;
  if (typeof number === 'number' && Number.isInteger(number) && number >= 1 && number <= 1e9) return number;
  issues.push({ path: 'version', message: 'must be a version number (an integer of at least 1)' });
  return null;
}

function timestamp(value: unknown, path: string, issues: ValidationIssue[]): Date | null {
  if (value === undefined) return null;
  const date = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(value) ? new Date(value) : null;
  if (date && !Number.isNaN(date.getTime())) return date;
  issues.push({ path, message: 'must be an ISO 8601 date or timestamp, such as 2026-05-01 or 2026-05-01T12:00:00Z' });
  return null;
}

/**
 * The decision runner's subjects and their payloads. Bodies that reach the public API are already
 * snake_case and final here, so the gateway passes them through untouched.
 */
import type { BreakingChange, DecisionContract, DecisionOverview, MissingSecret, ShadowComparison, VersionReview } from '@ds/decision-schema';
import type { WorkspaceScoped } from './common';
import type { ListReviewsRequest, ResolveReviewRequest, ReviewDetail, ReviewListReply, ReviewRef, ReviewResolvedReply, ReviewSummary } from './reviews';
import { broadcastSubject, rpcSubject } from './typed-subjects';

export type ExecutionSource = 'api' | 'webhook' | 'mcp' | 'playground' | 'shadow';

export interface RunDecisionRequest {
  workspaceId: string;
  slug: string;
  /** The parsed request body; the runner reads `state` from it (step 7). */
  body: Record<string, unknown>;
  includeProbabilities: boolean;
  source: ExecutionSource;
  livemode: boolean;
  apiKeyId: string | null;
  /** A pinned deployed version (`Decision-Version`); absent or null runs the active version. */
  version?: number | null;
}

export interface RunDecisionReply {
  /** The run response serialised once, by the runner: these bytes are the bytes the client (and a replay) gets. */
  body: string;
  /** Fresh 200s answered by the engine are billable and storable for idempotency; engine-error fallbacks are not. */
  billable: boolean;
}

export interface DecisionSummary {
  id: string;
  slug: string;
  name: string;
  status: 'draft' | 'deployed';
  active_version: number | null;
  endpoint_enabled: boolean;
}

export interface ListDecisionsReply {
  data: DecisionSummary[];
}

export interface GetContractRequest extends WorkspaceScoped {
  slug: string;
}

export interface CreateDecisionRequest extends WorkspaceScoped {
  slug: unknown;
  name: unknown;
  description: unknown;
  schema: unknown;
}

export interface DecisionCreatedReply {
  id: string;
  slug: string;
  name: string;
  status: 'draft' | 'deployed';
  revision: number;
}

export interface SaveDraftRequest extends WorkspaceScoped {
  decisionId: string;
  schema: unknown;
  revision: unknown;
}

export interface DecisionRef extends WorkspaceScoped {
  decisionId: string;
}

/** Who deployed a version: a signed-in user or an embedded editor's user. */
export interface Deployer {
  user_id: string;
  email: string | null;
}

export interface DeployRequest extends DecisionRef {
  /** Absent from older callers: the version is then recorded without its deployer. */
  deployedBy?: Deployer | null;
  /** Checked by the gateway (deployNote); absent from older callers and from rollbacks. */
  note?: string | null;
}

export interface RollbackRequest extends DeployRequest {
  version: unknown;
}

export interface CompareVersionsRequest extends DecisionRef {
  from: unknown;
  to: unknown;
}

export interface JsonChange {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
}

export interface VersionSummary {
  version: number;
  deployed_at: string;
  deployed_by: Deployer | null;
  /** The version this one copies when it was a rollback. */
  rolled_back_from: number | null;
  /** Why it was deployed, in the deployer's words; null when none was given. */
  note: string | null;
  active: boolean;
  /** Whether this version runs as the shadow of the active one. */
  shadow: boolean;
  /** The contract against the version before (every field added for the first). */
  contract_changes: JsonChange[];
  /** What it changed against the version before, in the editor's words; the first says what it holds. */
  review: VersionReview;
}

export interface VersionListReply {
  data: VersionSummary[];
}

export interface CompareVersionsReply {
  from: { version: number; schema: unknown };
  to: { version: number; schema: unknown };
  schema_changes: JsonChange[];
  contract_changes: JsonChange[];
  /** What deploying `to` where `from` is active changes, in the editor's words. */
  review: VersionReview;
  /** Headers of `to` naming a secret the workspace does not have; null when the secrets could not be read. */
  missing_secrets: MissingSecret[] | null;
}

/** The review of deploying the draft (no `version`) or of rolling back to `version`, against the active version. */
export interface ReviewVersionRequest extends DecisionRef {
  version?: unknown;
}

export interface ReviewVersionReply {
  /** The active version; null before the first deploy. */
  from: number | null;
  /** The version rolled back to; null for the draft. */
  to: number | null;
  /** Null when the draft does not validate (it cannot be deployed). */
  review: VersionReview | null;
  /** Headers naming a secret the workspace does not have; null when the secrets could not be read. */
  missing_secrets: MissingSecret[] | null;
}

/** Starts a replay; `body` is checked by the runner (`checkReplayPlan`), `plan` is the workspace's plan name. */
export interface StartReplayRequest extends DecisionRef {
  body: unknown;
  plan: string;
  startedBy: Deployer | null;
}

export interface ReplayRef extends DecisionRef {
  replayId: string;
}

/** `after`: the last position read (0 to start); `limit`: 1 to 200. */
export interface ReplayExecutionsRequest extends ReplayRef {
  after: unknown;
  limit: unknown;
}

export interface ReplayView {
  id: string;
  decision_id: string;
  /** null: the draft as it was when the replay started. */
  version: number | null;
  selection: { last: number } | { from: string; to: string };
  status: 'running' | 'completed' | 'cancelled';
  started_by: Deployer | null;
  created_at: string;
  finished_at: string | null;
  /** `running`: engine calls in flight, which a cancel lets finish (they are recorded and count against the cap). */
  progress: { total: number; done: number; failed: number; cancelled: number; pending: number; running: number };
  result: {
    compared: number;
    failed: number;
    action: { agreed: number; agreement: number | null };
    questions: Array<{ key: string; compared: number; agreed: number; agreement: number | null }>;
    confusion: { actions: string[]; counts: number[][] };
    accuracy: { labelled: number; old: number | null; new: number | null };
    /** Over compared executions a reviewer resolved (outcome source `review` or `audit`): how often each side matched the reviewer. */
    reviewers: {
      executions: number;
      action: { compared: number; old: number | null; new: number | null };
      questions: Array<{ key: string; compared: number; old: number | null; new: number | null }>;
    };
  };
  /**
   * The active version (when the replay started) replayed on the same executions, compared with the recorded runs
   * as `result` is: how far a version agrees with itself, the model's noise to read `result` against.
   * `same_as_result`: the replay is of the active version, so it is its own baseline. null: no version was active,
   * or the replay was started before baselines were kept.
   */
  baseline: (ReplayView['result'] & { version: number; same_as_result: boolean }) | null;
}

/** `last` (1 to 1000) or `from` and `to`, as the query string gives them. */
export interface ReplayEligibleRequest extends DecisionRef {
  query: Record<string, unknown>;
}

/** How many executions a replay of that selection would take (successful runs that kept their input), asked before it starts. */
export interface ReplayEligibleReply {
  selection: { last: number } | { from: string; to: string };
  eligible: number;
  /** Successful runs in the selection that did not keep their input (`settings.storeInput` was off). */
  without_input: number;
  /** Whether the active version keeps inputs (`settings.storeInput`); false with none deployed. */
  store_input: boolean;
}

export interface ReplayListReply {
  data: ReplayView[];
}

export interface ReplayedExecutionView {
  position: number;
  execution_id: string;
  /** The execution the replay recorded (`source: "replay"`); null until it ran, or when it was cancelled. */
  replay_execution_id: string | null;
  status: 'pending' | 'running' | 'done' | 'failed' | 'cancelled';
  old: { action: string; answers: Record<string, string | number> | null };
  new: { action: string; answers: Record<string, string | number> | null } | null;
  /** The active version's answer to the same state; null until it ran, or when the replay is of the active version. */
  baseline?: { action: string; answers: Record<string, string | number> | null } | null;
  outcome_action: string | null;
  error: { code: string; message: string } | null;
}

export interface ReplayExecutionsReply {
  data: ReplayedExecutionView[];
  /** Pass as `after` for the next page; null on the last. */
  next_after: number | null;
}

/** As ENDPOINT_BODY accepts it: the gateway checks the body before it is sent. */
export interface SetEndpointRequest extends DecisionRef {
  enabled: boolean;
}

/** `decision` is the decision's id (`dec_…`) or its slug. */
export interface GetDecisionRequest extends WorkspaceScoped {
  decision: string;
}

export interface DecisionDetailsReply {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  status: 'draft' | 'deployed';
  revision: number;
  active_version: number | null;
  endpoint_enabled: boolean;
  draft: unknown;
  /** The active version's schema, for the deploy screen's contract diff; null before the first deploy. */
  active_schema: unknown;
  versions: number[];
  updated_at: string;
}

export interface PlaygroundRunRequest extends WorkspaceScoped {
  decisionId: string;
  /** null runs the draft. */
  version: unknown;
  state: unknown;
}

export interface ListExecutionsRequest extends WorkspaceScoped {
  limit: number;
  cursor: string | null;
  decision: string | null;
  status: 'success' | 'error' | null;
  /** `include=trace`: each execution with how its action was reached. Absent (older callers) reads as false. */
  includeTrace?: boolean;
  /** The source groups to list (`EXECUTION_SOURCE_GROUPS`); absent or null lists every source. */
  sources?: ExecutionSourceGroup[] | null;
  version?: number | null;
  action?: string | null;
  /** An `action_reason.type`. */
  reason?: string | null;
  /** The code of a failed run's error, or of the engine error an `engine_error` fallback stood in for. */
  errorCode?: string | null;
  /** `include=total_count`: how many executions match the filters, counted up to `EXECUTIONS_COUNT_CAP`. */
  includeTotal?: boolean;
}

/**
 * Where an execution came from, as a person reads it: `live` and `test` are the API, secret-URL and agent runs of
 * live and test keys; the others are their own sources.
 */
export type ExecutionSourceGroup = 'live' | 'test' | 'playground' | 'replay' | 'shadow';

/** Asked by the billing ledger about reservations left unsettled (for example when a runner died mid-run). */
export interface ExecutionOutcomesRequest extends WorkspaceScoped {
  executionIds: string[];
}

/**
 * Per execution id: `billable` (a fresh 200 answered by the engine), `not_billable` (an error or an
 * engine-error fallback), or `unknown` (no execution was recorded: the run never finished).
 */
export interface ExecutionOutcomesReply {
  outcomes: Record<string, 'billable' | 'not_billable' | 'unknown'>;
  /** The decision of each recorded execution, so that what the ledger settles is booked under it. */
  decisions?: Record<string, string>;
}

/**
 * Asked by the billing ledger before it closes a budget lease: the executions that took a unit of the lease and
 * were answered with a fresh 200, recorded between `from` and `to` (ISO 8601). A runner that died between
 * recording such a run and publishing its settlement left it known only here.
 */
export interface LeaseExecutionsRequest extends WorkspaceScoped {
  leaseId: string;
  from: string;
  to: string;
}

export interface LeaseExecutionsReply {
  billable: string[];
  /** The decision of each billable execution listed. */
  decisions?: Record<string, string>;
}

export interface ListExecutionsReply {
  data: Record<string, unknown>[];
  has_more: boolean;
  next_cursor: string | null;
  /** With `include=total_count`: the executions matching the filters, at most the cap; `total_capped` when more match. */
  total_count?: number;
  total_capped?: boolean;
}

/** A decision's overview over `from`..`to` (ISO 8601 text as the caller sent it; the runner checks it). */
export interface DecisionOverviewRequest extends WorkspaceScoped {
  /** The decision's id (`dec_…`) or slug. */
  decision: string;
  from?: unknown;
  to?: unknown;
}

export type DecisionOverviewReply = DecisionOverview;

/** Looks a secret URL up by the SHA-256 hex of its token (the token itself never leaves the gateway). */
export interface ResolveHookRequest {
  tokenHash: string;
}

/** What the gateway needs to check and run a secret-URL call; null when no URL has this token. */
export interface ResolvedHook {
  workspaceId: string;
  decisionId: string;
  slug: string;
  /** The `whsec_…` secret calls must prove, or null when any call is accepted. */
  secret: string | null;
}

export type ResolveHookReply = ResolvedHook | null;

/**
 * Answers of the hook management subjects. `token` and `secret` are present when one was just created
 * (shown this once); `dropped` lists the token hashes whose cached resolutions must be dropped everywhere.
 */
export interface HookChangeReply {
  token?: string;
  secret?: string;
  dropped: string[];
}

/**
 * A decision's secret URL as the application shows it. The URL itself is never answered again (only its hash is
 * stored): it is shown when turned on or rotated.
 */
export interface HookStateReply {
  enabled: boolean;
  secretSet: boolean;
  /** When it was turned on; null when off. */
  enabledAt: string | null;
  /** When its URL or secret last changed; null when off. */
  changedAt: string | null;
  /** The latest run it started (any outcome recorded as an execution), whether or not it is on now. */
  lastCallAt: string | null;
}

/** Copies the named deployed decisions of `fromWorkspaceId` (their active version as the new draft) into `workspaceId`. */
export interface CopyDecisionsRequest extends WorkspaceScoped {
  fromWorkspaceId: string;
  slugs: string[];
  deploy: boolean;
}

export interface CopyDecisionsReply {
  created: Array<{ slug: string; id: string; deployed: boolean }>;
  /** Slugs not copied, with why: not found or never deployed in the partner's workspace, taken in the sub-workspace, or past its decision limit. */
  skipped: Array<{ slug: string; reason: 'not_found' | 'not_deployed' | 'exists' | 'limit' }>;
}

export interface DraftSavedReply {
  revision: number;
}

/** A deploy, a rollback or a promoted shadow: the version now active. */
export interface DeployedReply {
  version: number;
  /** What breaks a caller's call that worked against the version it replaced (`breakingChanges`); empty for a first deploy. */
  breaking: BreakingChange[];
}

export interface EndpointReply {
  enabled: boolean;
}

/** The playground's run response, shaped as the public run response with destinations as previews. */
export type PlaygroundRunReply = Record<string, unknown>;

/** A decision's cached copy is stale on every runner. */
export interface DecisionChangedNotice {
  workspaceId: string;
  slug: string;
}

/** An outcome reported for an execution, by API key or from the application. The body is checked by the runner. */
export interface ExecutionInputRequest extends WorkspaceScoped {
  executionId: string;
}

/** The state an execution was called with, for trying it again in the playground; `kept` is false where its version did not store inputs. */
export interface ExecutionInputReply {
  execution_id: string;
  decision_id: string;
  decision: string;
  kept: boolean;
  state?: unknown;
}

export interface RecordOutcomeRequest extends WorkspaceScoped {
  executionId: string;
  body: unknown;
}

export interface OutcomeReply {
  execution_id: string;
  answers: Record<string, string | boolean>;
  action: string | null;
  recorded_at: string;
}

/** `version`, `from` and `to` as the query gave them (strings or absent); the runner checks them. */
export interface QualityReportRequest extends DecisionRef {
  version: unknown;
  from: unknown;
  to: unknown;
}

/** The calibration fit: `version` is the deployed version whose outcomes are fitted. */
export interface FitCalibrationRequest extends DecisionRef {
  version: unknown;
}

/** Starts a shadow, or changes the rate of the one running: `version` absent deploys the draft as the shadow. */
export interface StartShadowRequest extends DecisionRef {
  version: unknown;
  rate: unknown;
  startedBy?: Deployer | null;
}

export interface ShadowState {
  version: number;
  /** Percent of live runs of the active version the shadow also evaluates. */
  rate: number;
  started_at: string;
  started_by: Deployer | null;
}

export interface ShadowReply {
  active_version: number | null;
  shadow: ShadowState | null;
  /** Over the shadow's most recent runs since it started; null when no shadow runs. */
  comparison: ShadowComparison | null;
}

export interface PromoteShadowRequest extends DecisionRef {
  deployedBy?: Deployer | null;
}

export const RUNNER_SUBJECTS = {
  run: rpcSubject<RunDecisionRequest, RunDecisionReply>('v1.decision-runner.run'),
  listDecisions: rpcSubject<WorkspaceScoped, ListDecisionsReply>('v1.decision-runner.decisions.list'),
  getContract: rpcSubject<GetContractRequest, DecisionContract>('v1.decision-runner.decisions.contract'),
  createDecision: rpcSubject<CreateDecisionRequest, DecisionCreatedReply>('v1.decision-runner.decisions.create'),
  saveDraft: rpcSubject<SaveDraftRequest, DraftSavedReply>('v1.decision-runner.decisions.draft'),
  deploy: rpcSubject<DeployRequest, DeployedReply>('v1.decision-runner.decisions.deploy'),
  /** Version history: every deployed version, who deployed it and its contract changes; two side by side; rollback. */
  listVersions: rpcSubject<DecisionRef, VersionListReply>('v1.decision-runner.versions.list'),
  compareVersions: rpcSubject<CompareVersionsRequest, CompareVersionsReply>('v1.decision-runner.versions.compare'),
  rollback: rpcSubject<RollbackRequest, DeployedReply>('v1.decision-runner.versions.rollback'),
  /** What a deploy of the draft, or a rollback, would change, with the headers that name missing secrets. */
  reviewVersion: rpcSubject<ReviewVersionRequest, ReviewVersionReply>('v1.decision-runner.versions.review'),
  /** Replays of a draft or version against past executions: start, list, read, their executions, cancel. */
  startReplay: rpcSubject<StartReplayRequest, ReplayView>('v1.decision-runner.replays.start'),
  listReplays: rpcSubject<DecisionRef, ReplayListReply>('v1.decision-runner.replays.list'),
  getReplay: rpcSubject<ReplayRef, ReplayView>('v1.decision-runner.replays.get'),
  replayExecutions: rpcSubject<ReplayExecutionsRequest, ReplayExecutionsReply>('v1.decision-runner.replays.executions'),
  cancelReplay: rpcSubject<ReplayRef, ReplayView>('v1.decision-runner.replays.cancel'),
  replayEligible: rpcSubject<ReplayEligibleRequest, ReplayEligibleReply>('v1.decision-runner.replays.eligible'),
  /** A version evaluated after sampled live runs, compared with the active one; promoted or stopped in one step. */
  getShadow: rpcSubject<DecisionRef, ShadowReply>('v1.decision-runner.shadow.get'),
  startShadow: rpcSubject<StartShadowRequest, ShadowReply>('v1.decision-runner.shadow.start'),
  promoteShadow: rpcSubject<PromoteShadowRequest, DeployedReply>('v1.decision-runner.shadow.promote'),
  stopShadow: rpcSubject<DecisionRef, ShadowReply>('v1.decision-runner.shadow.stop'),
  setEndpoint: rpcSubject<SetEndpointRequest, EndpointReply>('v1.decision-runner.decisions.endpoint'),
  listExecutions: rpcSubject<ListExecutionsRequest, ListExecutionsReply>('v1.decision-runner.executions.list'),
  executionOutcomes: rpcSubject<ExecutionOutcomesRequest, ExecutionOutcomesReply>('v1.decision-runner.executions.outcomes'),
  leaseExecutions: rpcSubject<LeaseExecutionsRequest, LeaseExecutionsReply>('v1.decision-runner.executions.lease'),
  /** A decision's charts, from the execution rollups. */
  decisionOverview: rpcSubject<DecisionOverviewRequest, DecisionOverviewReply>('v1.decision-runner.executions.overview'),
  /** Secret-URL triggers (hook tokens live with the decisions they run). */
  resolveHook: rpcSubject<ResolveHookRequest, ResolveHookReply>('v1.decision-runner.hooks.resolve'),
  hookState: rpcSubject<DecisionRef, HookStateReply>('v1.decision-runner.hooks.state'),
  enableHook: rpcSubject<DecisionRef, HookChangeReply>('v1.decision-runner.hooks.enable'),
  disableHook: rpcSubject<DecisionRef, HookChangeReply>('v1.decision-runner.hooks.disable'),
  rotateHook: rpcSubject<DecisionRef, HookChangeReply>('v1.decision-runner.hooks.rotate'),
  createHookSecret: rpcSubject<DecisionRef, HookChangeReply>('v1.decision-runner.hooks.secret.create'),
  deleteHookSecret: rpcSubject<DecisionRef, HookChangeReply>('v1.decision-runner.hooks.secret.delete'),
  /** Seeds a sub-workspace: copies named deployed decisions of the partner's workspace (partner mode). */
  copyDecisions: rpcSubject<CopyDecisionsRequest, CopyDecisionsReply>('v1.decision-runner.decisions.copy'),
  /** One decision as the application's editor needs it: draft, revision and the active version's schema. */
  getDecision: rpcSubject<GetDecisionRequest, DecisionDetailsReply>('v1.decision-runner.decisions.get'),
  /** A run from the application's playground: the draft or a version, destinations as previews. */
  playground: rpcSubject<PlaygroundRunRequest, PlaygroundRunReply>('v1.decision-runner.playground.run'),
  /** What turned out to be right for an execution; a repeat replaces it. */
  recordOutcome: rpcSubject<RecordOutcomeRequest, OutcomeReply>('v1.decision-runner.executions.outcome'),
  /** The stored state of one execution, for people who may edit the decision. */
  listReviews: rpcSubject<ListReviewsRequest, ReviewListReply>('v1.decision-runner.reviews.list'),
  getReview: rpcSubject<ReviewRef, ReviewDetail>('v1.decision-runner.reviews.get'),
  claimReview: rpcSubject<ReviewRef, ReviewSummary>('v1.decision-runner.reviews.claim'),
  releaseReview: rpcSubject<ReviewRef, ReviewSummary>('v1.decision-runner.reviews.release'),
  resolveReview: rpcSubject<ResolveReviewRequest, ReviewResolvedReply>('v1.decision-runner.reviews.resolve'),
  executionInput: rpcSubject<ExecutionInputRequest, ExecutionInputReply>('v1.decision-runner.executions.input'),
  /** Calibration, accuracy and agreement of one version over its executions with outcomes. */
  qualityReport: rpcSubject<QualityReportRequest, Record<string, unknown>>('v1.decision-runner.decisions.quality'),
  /** Fits a calibration per question from a version's outcomes and writes it into the draft. */
  fitCalibration: rpcSubject<FitCalibrationRequest, Record<string, unknown>>('v1.decision-runner.decisions.calibration'),
} as const;

export const RUNNER_BROADCASTS = {
  /** A decision's slug, active version or endpoint switch changed: runners drop their cached copy. */
  decisionChanged: broadcastSubject<DecisionChangedNotice>('v1.decision-runner.decision.changed'),
} as const;

/**
 * The decision runner's subjects and their payloads. Bodies that reach the public API are already
 * snake_case and final here, so the gateway passes them through untouched.
 */
import type { DecisionContract } from '@ds/decision-schema';
import type { WorkspaceScoped } from './common';
import { broadcastSubject, rpcSubject } from './typed-subjects';

export type ExecutionSource = 'api' | 'webhook' | 'mcp' | 'playground';

export interface RunDecisionRequest {
  workspaceId: string;
  slug: string;
  /** The parsed request body; the runner reads `state` from it (step 7). */
  body: Record<string, unknown>;
  includeProbabilities: boolean;
  source: ExecutionSource;
  livemode: boolean;
  apiKeyId: string | null;
}

export interface RunDecisionReply {
  /** The run response serialised once, by the runner: these bytes are the bytes the client (and a replay) gets. */
  body: string;
  /** Fresh 200s answered by the engine are billable and storable for idempotency; engine-error fallbacks are not. */
  billable: boolean;
}

export interface DecisionSummary {
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

export interface SetEndpointRequest extends DecisionRef {
  enabled: unknown;
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
}

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
}

export interface ListExecutionsReply {
  data: Record<string, unknown>[];
  has_more: boolean;
  next_cursor: string | null;
}

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

export interface DeployedReply {
  version: number;
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

export const RUNNER_SUBJECTS = {
  run: rpcSubject<RunDecisionRequest, RunDecisionReply>('v1.decision-runner.run'),
  listDecisions: rpcSubject<WorkspaceScoped, ListDecisionsReply>('v1.decision-runner.decisions.list'),
  getContract: rpcSubject<GetContractRequest, DecisionContract>('v1.decision-runner.decisions.contract'),
  createDecision: rpcSubject<CreateDecisionRequest, DecisionCreatedReply>('v1.decision-runner.decisions.create'),
  saveDraft: rpcSubject<SaveDraftRequest, DraftSavedReply>('v1.decision-runner.decisions.draft'),
  deploy: rpcSubject<DecisionRef, DeployedReply>('v1.decision-runner.decisions.deploy'),
  setEndpoint: rpcSubject<SetEndpointRequest, EndpointReply>('v1.decision-runner.decisions.endpoint'),
  listExecutions: rpcSubject<ListExecutionsRequest, ListExecutionsReply>('v1.decision-runner.executions.list'),
  executionOutcomes: rpcSubject<ExecutionOutcomesRequest, ExecutionOutcomesReply>('v1.decision-runner.executions.outcomes'),
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
} as const;

export const RUNNER_BROADCASTS = {
  /** A decision's slug, active version or endpoint switch changed: runners drop their cached copy. */
  decisionChanged: broadcastSubject<DecisionChangedNotice>('v1.decision-runner.decision.changed'),
} as const;

/**
 * One payload type per subject. Bodies that reach the public API are already snake_case and final here,
 * so the gateway passes them through untouched.
 */

export type ExecutionSource = 'api' | 'webhook' | 'mcp';
export type EngineName = 'llm' | 'checkpoint';
export type PlanName = 'genesis' | 'developer' | 'growth' | 'enterprise';

// ---- decision-runner -------------------------------------------------------------------------

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
  /** The run response exactly as the public API returns it. */
  body: Record<string, unknown>;
  /** Fresh 200s answered by the engine are billable and storable for idempotency; engine-error fallbacks are not. */
  billable: boolean;
}

export interface WorkspaceScoped {
  workspaceId: string;
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

export interface ListExecutionsRequest extends WorkspaceScoped {
  limit: number;
  cursor: string | null;
  decision: string | null;
  status: 'success' | 'error' | null;
}

export interface ListExecutionsReply {
  data: Record<string, unknown>[];
  has_more: boolean;
  next_cursor: string | null;
}

// ---- engine-proxy ----------------------------------------------------------------------------

export interface EngineQuestion {
  key: string;
  kind: 'choice' | 'score' | 'probability';
  instructions: unknown;
  /** Every outcome the distribution must cover, in order (choice options with `other`, score labels, yes/no). */
  outcomes: string[];
  /** What the model reads about each outcome (option descriptions, level texts, the criterion). */
  guide: unknown;
}

export interface AnswerQuestionsRequest extends WorkspaceScoped {
  engine: EngineName | null;
  model: string | null;
  timeoutMs: number;
  context: string | null;
  state: unknown;
  questions: EngineQuestion[];
}

export interface AnswerQuestionsReply {
  distributions: Record<string, Record<string, number>>;
  engine: EngineName;
  model: string;
  inputTokens: number;
  outputTokens: number;
  estimatedCostUsd: number;
}

// ---- billing-ledger --------------------------------------------------------------------------

export interface BillingCommitRequest extends WorkspaceScoped {
  executionId: string;
}

export interface PlanView {
  name: PlanName;
  rate_limit_per_minute: number;
  hard_cap: boolean;
  included_decisions: number;
  max_decisions: number | null;
  price_per_million_cents: number | null;
  retention_days: number;
}

export interface AccountReply {
  plan: PlanView;
  usage: { period_start: string; period_end: string; used: number; included: number };
}

export interface SetPlanRequest extends WorkspaceScoped {
  plan: unknown;
  overrides: unknown;
}

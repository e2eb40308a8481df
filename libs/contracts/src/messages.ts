/**
 * One payload type per subject. Bodies that reach the public API are already snake_case and final here,
 * so the gateway passes them through untouched.
 */

export type ExecutionSource = 'api' | 'webhook' | 'mcp' | 'playground';
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
  /** The run response serialised once, by the runner: these bytes are the bytes the client (and a replay) gets. */
  body: string;
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

export type LlmProvider = 'anthropic' | 'openai';

/**
 * Saves (or replaces) the workspace's own provider key and selects it (`useOwnKey` becomes true). A
 * workspace holds one key. Refused with INVALID_REQUEST (details paths `provider`, `api_key`) unless
 * `provider` is anthropic or openai and `apiKey` is 8 to 512 printable characters without spaces.
 */
export interface SetProviderKeyRequest extends WorkspaceScoped {
  provider: unknown;
  apiKey: unknown;
}

/** What is ever shown of a saved key. */
export interface ProviderKeyView {
  provider: LlmProvider;
  last4: string;
}

/** `v1.engine-proxy.provider-key.get` answers the saved key's view, or null when none is saved. */
export type GetProviderKeyReply = ProviderKeyView | null;

/**
 * Deleting the key keeps `useOwnKey` as it was: a workspace that chose its own key then gets 424
 * ENGINE_NOT_CONFIGURED rather than being moved silently onto the service's shared key.
 */
export interface DeleteProviderKeyReply {
  deleted: boolean;
}

/** `useOwnKey` must be a boolean (INVALID_REQUEST, details path `use_own_key`, otherwise). */
export interface SetEngineSettingsRequest extends WorkspaceScoped {
  useOwnKey: unknown;
}

export interface EngineSettingsReply {
  /** true: llm runs use the workspace's key (424 ENGINE_NOT_CONFIGURED without one); false: the shared key, within its slots. */
  useOwnKey: boolean;
  providerKey: ProviderKeyView | null;
  /** The provider this service's llm engine speaks; a saved key for another provider cannot be used. */
  llmProvider: LlmProvider;
}

// ---- billing-ledger --------------------------------------------------------------------------

/**
 * Step 6. Checks included volume, credits, spend cap and hard cap in the spec's order and, when the run
 * may go ahead, holds one decision's worth for this execution, so that concurrent runs can never consume
 * more than remains. Answers the 402 errors of step 6. Reserving the same execution id twice is a no-op.
 */
export interface BillingReserveRequest extends WorkspaceScoped {
  executionId: string;
}

export interface BillingReserveReply {
  reserved: true;
}

/**
 * Settles a reservation exactly once: `billable: true` commits it (a fresh 200), `false` releases it
 * (an error or an engine-error fallback). Settling again with the same outcome answers the same state;
 * settling a committed reservation as released (or the reverse) is a CONFLICT. A reservation never
 * settled is settled by the ledger itself after asking the runner for the execution's outcome.
 */
export interface BillingSettleRequest extends WorkspaceScoped {
  executionId: string;
  billable: boolean;
}

/**
 * One settlement event on the SETTLEMENTS stream: the runner publishes it when a run's outcome is known,
 * deduplicated by execution id; the ledger posts them in batches.
 */
export type BillingSettlement = BillingSettleRequest;

export interface BillingSettleReply {
  state: 'committed' | 'released';
  /** On commit: what paid for the decision (the period's included volume, or which credit grants). */
  paid_by?: {
    funding: 'included' | 'credits';
    charges: Array<{ source: 'promotional'; grant_id: string; amount_microcents: number } | { source: 'paid'; amount_microcents: number }>;
  };
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

export type Currency = 'usd' | 'brl';

/** At most RETENTION_BATCH_MAX workspace ids per request. */
export interface RetentionRequest {
  workspaceIds: string[];
}

/** Days of execution log kept per workspace id asked about; a workspace without an account has the default plan's. */
export interface RetentionReply {
  retentionDays: Record<string, number>;
}

export const RETENTION_BATCH_MAX = 1000;

export interface CreditBalanceView {
  id: string;
  kind: 'promotional' | 'paid';
  remaining_cents: number;
  currency: Currency;
  expires_at: string | null;
}

export interface AccountReply {
  plan: PlanView;
  usage: {
    period_start: string;
    period_end: string;
    /** Decisions billed in this period (committed), whatever paid for them. */
    used: number;
    included: number;
    /** Reserved for runs still in flight. */
    reserved: number;
  };
  balance: {
    currency: Currency;
    available_cents: number;
    promotional_cents: number;
    paid_cents: number;
    credits: CreditBalanceView[];
  };
  spend_cap: { spend_cap_cents: number | null; spent_cents: number; currency: Currency };
}

export interface SetPlanRequest extends WorkspaceScoped {
  plan: unknown;
  overrides: unknown;
}

export interface GrantCreditsRequest extends WorkspaceScoped {
  kind: unknown;
  amount_cents: unknown;
  currency: unknown;
  expires_at: unknown;
  /** The caller's idempotency id for the grant: the same id twice grants once. */
  grantId: string;
}

export interface CreditGrantReply {
  id: string;
  kind: 'promotional' | 'paid';
  amount_cents: number;
  currency: Currency;
  expires_at: string | null;
  granted_at: string;
}

export interface SetSpendCapRequest extends WorkspaceScoped {
  spend_cap_cents: unknown;
}

// ---- delivery (JetStream DELIVERIES, published by decision-runner) ---------------------------

export type DeliveryKind = 'webhook' | 'http' | 'workflow' | 'agent';

/**
 * One outgoing call, published once per queued destination with `Nats-Msg-Id` = `deliveryId` on
 * `DELIVERY_STREAM.subjectFor(workspaceId)`. The runner renders everything that depends on the run; the
 * delivery service adds only what depends on the attempt (signature, timestamp, delivery-id headers).
 */
export interface DeliveryMessage {
  /** `dlv_…`: the delivery's id, the JetStream message id, the event id of a webhook. */
  deliveryId: string;
  workspaceId: string;
  decisionId: string;
  decisionSlug: string;
  executionId: string;
  /** The destination's `key` in the schema. */
  destinationKey: string;
  kind: DeliveryKind;
  livemode: boolean;
  url: string;
  method: string;
  /** Rendered headers of an `http` destination (at most 20); empty for the other kinds. */
  headers: Record<string, string>;
  /** The exact body text to send (a webhook's `decision.completed` event, a rendered template, an agent or workflow payload). */
  body: string;
  /** ISO 8601 time the run answered. */
  createdAt: string;
}

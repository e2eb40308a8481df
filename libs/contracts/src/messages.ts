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

/**
 * An llm destination's call (step 10): `prompt` is the system instruction and `input` the user turn, both
 * already rendered by the runner. Same providers, keys and shared-key slots as the engine's own calls; retries
 * of transient failures only inside `timeoutMs`. Fails with the engine's public codes.
 */
export interface CompleteTextRequest extends WorkspaceScoped {
  /** null: the llm engine's configured model. */
  model: string | null;
  prompt: string;
  input: string;
  maxTokens: number;
  temperature: number;
  timeoutMs: number;
}

export interface CompleteTextReply {
  text: string;
  /** As reported by the provider. */
  model: string;
  inputTokens: number;
  outputTokens: number;
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
  /**
   * The destination's own headers (at most 20, none of them reserved for the delivery) and the body's
   * `content-type`: `application/json` for webhooks, workflows and agents; for http as its destination declares,
   * else `application/json` for a JSON body template and `text/plain; charset=utf-8` for another.
   */
  headers: Record<string, string>;
  /** The exact body text to send (a webhook's `decision.completed` event, a rendered template, an agent or workflow payload). */
  body: string;
  /** ISO 8601 time the run answered. */
  createdAt: string;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface ListDeliveriesRequest extends WorkspaceScoped {
  limit: number;
  cursor: string | null;
  /** `dec_…`: only this decision's deliveries. */
  decisionId: string | null;
  status: DeliveryStatus | null;
}

export interface DeliveryRef extends WorkspaceScoped {
  deliveryId: string;
}

/** One attempt as the application shows it. */
export interface DeliveryAttemptView {
  sequence: number;
  attempt: number;
  started_at: string;
  /** `succeeded`, `failed` (the receiver answered something else), `timeout`, `refused` (SSRF guard or scheme), `network`, `interrupted` (the sender stopped mid-attempt). */
  outcome: string;
  response_status: number | null;
  duration_ms: number | null;
  error: string | null;
}

/** One delivery as the application shows it; the body and headers sent are not repeated. */
export interface DeliveryView {
  id: string;
  decision_id: string;
  decision_slug: string;
  execution_id: string;
  destination_key: string;
  kind: DeliveryKind;
  url: string;
  livemode: boolean;
  status: DeliveryStatus;
  /** The current attempt sequence: 1, then one more per resend. */
  sequence: number;
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  completed_at: string | null;
  attempts: DeliveryAttemptView[];
}

export interface ListDeliveriesReply {
  data: DeliveryView[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface SigningSecretView {
  /** `whsec_…` plus its last four characters. */
  hint: string;
  created_at: string;
  /** While the previous secret still signs beside this one: when it stops. */
  previous_expires_at: string | null;
}

export interface RotatedSigningSecretReply {
  /** The new secret in full, shown this once. */
  secret: string;
  previous_expires_at: string | null;
}

// ---- decision-runner: partner seed ----------------------------------------------------------

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

/** A sub-workspace was deleted: the payload of a WORKSPACE_EVENTS message. */
export interface WorkspaceDeletedEvent {
  workspaceId: string;
  /** The partner workspace it belonged to. */
  partnerWorkspaceId: string;
  deletedAt: string;
}

// ---- partner ---------------------------------------------------------------------------------

export type EmbedPermission = 'decisions:read' | 'decisions:write' | 'decisions:deploy' | 'decisions:delete' | 'executions:read' | 'agent';

/** The caller of a partner endpoint: the API key's workspace and the user who created the key (null for none). */
export interface PartnerCaller {
  partnerWorkspaceId: string;
  authorId: string | null;
  livemode: boolean;
}

export interface SetPartnerSettingsRequest extends WorkspaceScoped {
  enabled: unknown;
  allowed_origins: unknown;
}

export interface PartnerSettingsReply {
  enabled: boolean;
  allowed_origins: string[];
}

export interface SubWorkspaceView {
  id: string;
  external_id: string;
  name: string;
  metadata: Record<string, string>;
  limits: { max_decisions: number | null; monthly_decisions: number | null };
  usage: { decisions: number; period_used: number; period_start: string; period_end: string };
  created_at: string;
  seed?: CopyDecisionsReply;
}

export interface UpsertSubWorkspaceRequest {
  caller: PartnerCaller;
  body: Record<string, unknown>;
}

/** `created` decides 201 or 200; the gateway writes the workspace row (its own table) for `workspace.id`. */
export interface UpsertSubWorkspaceReply {
  created: boolean;
  workspace: SubWorkspaceView;
}

export interface ListSubWorkspacesRequest {
  caller: PartnerCaller;
  query: Record<string, unknown>;
}

export interface ListSubWorkspacesReply {
  data: SubWorkspaceView[];
  next_cursor: string | null;
}

export interface SubWorkspaceRefRequest {
  caller: PartnerCaller;
  /** The sub-workspace's id or `ext:<external_id>`. */
  ref: string;
}

export interface UpdateSubWorkspaceRequest extends SubWorkspaceRefRequest {
  body: Record<string, unknown>;
}

export interface DeleteSubWorkspaceReply {
  id: string;
}

export interface CreateEmbedSessionRequest {
  caller: PartnerCaller;
  body: Record<string, unknown>;
}

/** `workspaceCreated`: the gateway writes the workspace row; `workspace.created` says the same to the caller. */
export interface EmbedSessionReply {
  id: string;
  url: string;
  launch_expires_at: string;
  expires_at: string;
  permissions: EmbedPermission[];
  origins: string[];
  workspace: SubWorkspaceView & { created: boolean };
}

export interface CloseEmbedSessionRequest {
  caller: PartnerCaller;
  id: string;
}

export interface RevokeEmbedSessionsRequest {
  caller: PartnerCaller;
  body: Record<string, unknown>;
}

export interface RedeemTicketRequest {
  ticket: string;
}

/** An embed session as the gateway enforces it. */
export interface EmbedSessionView {
  id: string;
  workspaceId: string;
  user: { id: string; name: string | null; email: string | null };
  permissions: EmbedPermission[];
  origins: string[];
  startPath: string;
  locale: string | null;
  theme: string | null;
  expiresAt: string;
}

/**
 * A redeemed ticket: the cookie token (shown this once) and the session. A ticket that is used, past its
 * 60 seconds, or whose session was closed, revoked or expired answers `token: null` with the session's origins
 * (the "reopen" page may be framed by them); an unknown ticket answers null.
 */
export type RedeemTicketReply = { token: string; session: EmbedSessionView } | { token: null; origins: string[] } | null;

export interface EmbedSessionLookupRequest {
  token: string;
}

export type EmbedSessionLookupReply = EmbedSessionView | null;

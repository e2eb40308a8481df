// Shapes of a decision schema. `Normalized*` types are what validateSchema returns and what is stored and
// versioned: every optional part present, every default filled in, `other` appended to every choice question.
// `*Input` types describe what an author may write; a normalized schema is itself a valid input.

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** Text, or JSON measured by its serialized length (instructions, criteria, option and level descriptions). */
export type RichText = string | JsonValue[] | { [key: string]: JsonValue };

export const ACTIONS = ['continue', 'block', 'escalate', 'fallback'] as const;
export type Action = (typeof ACTIONS)[number];

export const QUESTION_KINDS = ['choice', 'score', 'probability'] as const;
export type QuestionKind = (typeof QUESTION_KINDS)[number];

export const OTHER_OPTION = 'other';

// ---- state -------------------------------------------------------------------------------------------------

export const STATE_FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array'] as const;
export type StateFieldType = (typeof STATE_FIELD_TYPES)[number];

export interface StateField {
  type: StateFieldType;
  description: string | null;
  required: boolean;
  /** Only on string fields. */
  enum: string[] | null;
  /** Only on object fields, and only when declared: their own fields, checked like the state's. */
  fields?: Record<string, StateField>;
}

export const LIST_ITEM_TYPES = ['string', 'object'] as const;
export type ListItemType = (typeof LIST_ITEM_TYPES)[number];

export type StateSchema = { type: 'object'; fields: Record<string, StateField> } | { type: 'text' } | { type: 'list'; items: ListItemType };

// ---- questions ---------------------------------------------------------------------------------------------

export interface ChoiceOption {
  value: string;
  description: RichText | null;
}

/** A text level is its own label; a rubric level without a label is labelled by normalization. */
export type ScoreLevel = string | { label: string; description: RichText | null } | { label: string; rubric: JsonValue };

interface QuestionCommon {
  key: string;
  instructions: RichText;
  /** null: no minimum. */
  minConfidence: number | null;
}

export interface ChoiceQuestion extends QuestionCommon {
  kind: 'choice';
  /** Ends with `{ value: 'other', description: null }`. */
  options: ChoiceOption[];
}

export interface ScoreQuestion extends QuestionCommon {
  kind: 'score';
  levels: ScoreLevel[];
}

export interface ProbabilityQuestion extends QuestionCommon {
  kind: 'probability';
  criterion: RichText;
  /** Named by destination conditions as `"value": "threshold"`; null when the question has none. */
  threshold: number | null;
}

export type NormalizedQuestion = ChoiceQuestion | ScoreQuestion | ProbabilityQuestion;

// ---- composites, conditions, policies ----------------------------------------------------------------------

export interface CompositeTerm {
  question: string;
  weight: number;
  /** Only on terms of choice questions, where it is required. */
  option?: string;
}

export interface Composite {
  key: string;
  description: string | null;
  terms: CompositeTerm[];
}

export const OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte'] as const;
export type Operator = (typeof OPERATORS)[number];
export const EQUALITY_OPERATORS = ['eq', 'neq'] as const;
export type EqualityOperator = (typeof EQUALITY_OPERATORS)[number];

/** The word a destination condition may use in place of a probability question's own threshold. */
export const THRESHOLD_VALUE = 'threshold';

export interface AnswerCondition {
  on: 'answer';
  question: string;
  op: Operator;
  /** choice: an option value; score: a level label; probability: 0..1 or, in destinations, 'threshold'. */
  value: string | number;
}

export interface ConfidenceCondition {
  on: 'confidence';
  question: string;
  op: Operator;
  value: number;
}

export interface ScoreCondition {
  on: 'score';
  question: string;
  op: Operator;
  value: number;
}

export interface CompositeCondition {
  on: 'composite';
  composite: string;
  op: Operator;
  value: number;
}

export interface ActionCondition {
  on: 'action';
  op: EqualityOperator;
  value: Action;
}

export type PolicyCondition = AnswerCondition | ConfidenceCondition | ScoreCondition | CompositeCondition;
export type DestinationCondition = PolicyCondition | ActionCondition;

export interface Policy {
  when: PolicyCondition;
  and: PolicyCondition[];
  action: Action;
}

// ---- settings ----------------------------------------------------------------------------------------------

export const ENGINES = ['llm', 'checkpoint'] as const;
export type Engine = (typeof ENGINES)[number];
export const ENGINE_ERROR_MODES = ['fallback', 'error'] as const;
export type EngineErrorMode = (typeof ENGINE_ERROR_MODES)[number];
/** Which distribution answers a run: the numbers the model states (`model`) or its answer tokens' probabilities. */
export const CONFIDENCE_SOURCE_SETTINGS = ['model', 'tokens'] as const;
export type ConfidenceSourceSetting = (typeof CONFIDENCE_SOURCE_SETTINGS)[number];

/** The distributions a run may be answered from, and that calibration maps are kept for. */
export const CONFIDENCE_SOURCES = ['model', 'tokens'] as const;
export type ConfidenceSource = (typeof CONFIDENCE_SOURCES)[number];

export const CALIBRATION_METHODS = ['temperature', 'platt', 'isotonic'] as const;
export type CalibrationMethod = (typeof CALIBRATION_METHODS)[number];

/** One question's stored map (applied by `quality/calibration.ts`). */
export type CalibrationMap =
  { method: 'temperature'; temperature: number } | { method: 'platt'; a: number; b: number } | { method: 'isotonic'; points: [number, number][] };

/** Per confidence source, per question key: the map applied to that source's distribution of that question. */
export type Calibration = Partial<Record<ConfidenceSource, Record<string, CalibrationMap>>>;

export interface Settings {
  /** null: the workspace default engine. */
  engine: Engine | null;
  /** null: the engine's configured model. */
  model: string | null;
  timeoutMs: number;
  onEngineError: EngineErrorMode;
  storeInput: boolean;
  storeOutput: boolean;
  /**
   * Present only as `tokens`: runs ask the provider for token log-probabilities and answer choice and score
   * questions from them. Absent means `model`, so schemas without it normalize exactly as before.
   */
  confidenceSource?: 'tokens';
  /**
   * Present only when the decision sends runs to human review (docs/reviews.md). Absent means no review, so
   * schemas without it normalize exactly as before.
   */
  review?: ReviewSettings;
}

/** Why a run was sent to review: its action, a low confidence, an engine error, or the audit share of the rest. */
export const REVIEW_REASONS = ['action', 'low_confidence', 'engine_error', 'audit'] as const;
export type ReviewReason = (typeof REVIEW_REASONS)[number];

export interface ReviewSettings {
  when: { actions: Action[]; lowConfidence: boolean; engineError: boolean };
  /** The share (0..1) of the runs `when` does not match that is sampled for an audit. */
  auditRate: number;
  /** How long after the run an item is due. */
  dueMinutes: number;
}

export type ReviewSettingsInput = {
  when?: { actions?: Action[]; lowConfidence?: boolean; engineError?: boolean } | null;
  auditRate?: number | null;
  dueMinutes?: number | null;
};

// ---- destinations ------------------------------------------------------------------------------------------

export const DESTINATION_TYPES = ['reply', 'function', 'llm', 'agent', 'workflow', 'webhook', 'http'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

/** Roots a param's `from` path may start with. */
export const PARAM_ROOTS = ['state', 'result', 'confidence', 'scores', 'composites', 'action', 'decision_id', 'execution_id'] as const;
export type ParamRoot = (typeof PARAM_ROOTS)[number];

export type ParamSpec = { from: string; required: boolean } | { value: JsonValue };

export const AGENT_MODES = ['sync', 'async'] as const;
export type AgentMode = (typeof AGENT_MODES)[number];
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

interface DestinationCommon {
  key: string;
  description: string | null;
  /** All must hold; empty means always. */
  when: DestinationCondition[];
  params: Record<string, ParamSpec>;
  headers: Record<string, string>;
}

export interface ReplyDestination extends DestinationCommon {
  type: 'reply';
  text: string;
  buttons: string[];
}
export interface FunctionDestination extends DestinationCommon {
  type: 'function';
  function: string;
}
export interface LlmDestination extends DestinationCommon {
  type: 'llm';
  prompt: string;
  input: string | null;
  model: string | null;
  maxTokens: number;
  temperature: number;
  timeoutMs: number;
}
export interface AgentDestination extends DestinationCommon {
  type: 'agent';
  url: string;
  mode: AgentMode;
  instructions: string | null;
  tools: string[];
  timeoutMs: number;
}
export interface WorkflowDestination extends DestinationCommon {
  type: 'workflow';
  url: string;
}
/** When a webhook fires: `completed` after each run (`decision.completed`), `reviewed` when a review is resolved (`decision.reviewed`). */
export const WEBHOOK_EVENTS = ['completed', 'reviewed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export interface WebhookDestination extends DestinationCommon {
  type: 'webhook';
  url: string;
  /** Present only as `reviewed`; absent means after each run, so schemas without it normalize exactly as before. */
  on?: 'reviewed';
}
export interface HttpDestination extends DestinationCommon {
  type: 'http';
  url: string;
  method: HttpMethod;
  body: string | null;
}

export type NormalizedDestination =
  ReplyDestination | FunctionDestination | LlmDestination | AgentDestination | WorkflowDestination | WebhookDestination | HttpDestination;

// ---- the whole ---------------------------------------------------------------------------------------------

export interface NormalizedSchema {
  state: StateSchema;
  /** Sent to the engine under the reserved key `decision_context`. */
  context: string | null;
  questions: NormalizedQuestion[];
  composites: Composite[];
  policies: Policy[];
  fallbackAction: Action;
  settings: Settings;
  destinations: NormalizedDestination[];
  /** Maps applied to the engine's distributions before answers are read; absent when no question has one. */
  calibration?: Calibration;
}

// ---- what an author may write ------------------------------------------------------------------------------

export interface StateFieldInput {
  type: StateFieldType;
  description?: string | null;
  required?: boolean;
  enum?: string[] | null;
  fields?: Record<string, StateFieldInput> | null;
}
export type StateSchemaInput = { type: 'object'; fields: Record<string, StateFieldInput> } | { type: 'text' } | { type: 'list'; items: ListItemType };

export type ScoreLevelInput = string | { label: string; description?: RichText | null } | { label?: string; rubric: JsonValue };

type QuestionCommonInput = { key: string; instructions: RichText; minConfidence?: number | null };
export type QuestionInput =
  | (QuestionCommonInput & { kind: 'choice'; options: { value: string; description?: RichText | null }[] })
  | (QuestionCommonInput & { kind: 'score'; levels: ScoreLevelInput[] })
  | (QuestionCommonInput & { kind: 'probability'; criterion: RichText; threshold?: number | null });

export type CompositeInput = Omit<Composite, 'description'> & { description?: string | null };
export type PolicyInput = Omit<Policy, 'and'> & { and?: PolicyCondition[] };
export type ParamSpecInput = { from: string; required?: boolean } | { value: JsonValue };

type DestinationCommonInput = {
  key: string;
  description?: string | null;
  when?: DestinationCondition[];
  params?: Record<string, ParamSpecInput>;
  headers?: Record<string, string>;
};
export type DestinationInput = DestinationCommonInput &
  (
    | { type: 'reply'; text: string; buttons?: string[] }
    | { type: 'function'; function: string }
    | {
        type: 'llm';
        prompt: string;
        input?: string | null;
        model?: string | null;
        maxTokens?: number;
        temperature?: number;
        timeoutMs?: number;
      }
    | { type: 'agent'; url: string; mode?: AgentMode; instructions?: string | null; tools?: string[]; timeoutMs?: number }
    | { type: 'workflow'; url: string }
    | { type: 'webhook'; url: string; on?: WebhookEvent | null }
    | { type: 'http'; url: string; method?: HttpMethod; body?: string | null }
  );

export type SettingsInput = Partial<Omit<Settings, 'confidenceSource' | 'review'>> & {
  confidenceSource?: ConfidenceSourceSetting;
  review?: ReviewSettingsInput | null;
};

export interface SchemaInput {
  state: StateSchemaInput;
  context?: string | null;
  questions: QuestionInput[];
  composites?: CompositeInput[];
  policies?: PolicyInput[];
  fallbackAction: Action;
  settings?: SettingsInput;
  destinations?: DestinationInput[];
  calibration?: Calibration | null;
}

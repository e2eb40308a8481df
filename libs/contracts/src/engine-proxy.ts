/** The engine proxy's subjects and their payloads. */
import type { WorkspaceScoped } from './common';
import { broadcastSubject, rpcSubject } from './typed-subjects';

export type EngineName = 'llm' | 'checkpoint';

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
  /**
   * Ask for token log-probabilities too (a decision whose confidence source is `tokens`). Absent: the request is
   * written exactly as without the feature. Providers without log-probabilities (Anthropic) ignore it.
   */
  tokenProbabilities?: boolean;
}

export interface AnswerQuestionsReply {
  distributions: Record<string, Record<string, number>>;
  /**
   * Choice and score questions' distributions read from the answer tokens' log-probabilities; only when asked
   * for and the provider returned them, and only for the questions they could be read for.
   */
  tokenDistributions?: Record<string, Record<string, number>>;
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
/** The key as PROVIDER_KEY_BODY accepts it: the gateway checks it before it is sent. */
export interface SetProviderKeyRequest extends WorkspaceScoped {
  provider: LlmProvider;
  apiKey: string;
}

/**
 * One small call to the llm engine's provider with a key: the one given (not saved by this), or the workspace's
 * saved key when none is given. Refused with INVALID_REQUEST like a save when the given key is not valid, and
 * NOT_FOUND when none is given and none is saved.
 */
export interface TestProviderKeyRequest extends WorkspaceScoped {
  provider?: LlmProvider;
  apiKey?: string;
}

/** `ok` false: the provider refused or failed, `code` (an engine error code) and `reason` say how. */
export interface TestProviderKeyReply {
  ok: boolean;
  provider: LlmProvider;
  model: string | null;
  code: string | null;
  reason: string | null;
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
/** Each setting is changed only when given; `defaultEngine: null` hands the choice back to the service. */
/** As ENGINE_SETTINGS_BODY accepts them: at least one given; `defaultEngine: null` is back to the service's default. */
export interface SetEngineSettingsRequest extends WorkspaceScoped {
  useOwnKey?: boolean;
  defaultEngine?: EngineName | null;
}

export interface EngineSettingsReply {
  /** true: llm runs use the workspace's key (424 ENGINE_NOT_CONFIGURED without one); false: the shared key, within its slots. */
  useOwnKey: boolean;
  providerKey: ProviderKeyView | null;
  /** The provider this service's llm engine speaks; a saved key for another provider cannot be used. */
  llmProvider: LlmProvider;
  /** The engine of decisions that pin none; null: the service's own default. */
  defaultEngine: EngineName | null;
  /** The service's ENGINE_DEFAULT, which applies while `defaultEngine` is null. */
  serviceDefaultEngine: EngineName;
}

export const ENGINE_SUBJECTS = {
  answer: rpcSubject<AnswerQuestionsRequest, AnswerQuestionsReply>('v1.engine-proxy.answer'),
  /** An llm destination: one free-text completion with the engine's providers, keys and slots. */
  complete: rpcSubject<CompleteTextRequest, CompleteTextReply>('v1.engine-proxy.complete'),
  /** A workspace's own provider key (Admin in the application); the key itself is never answered back. */
  setProviderKey: rpcSubject<SetProviderKeyRequest, ProviderKeyView>('v1.engine-proxy.provider-key.set'),
  getProviderKey: rpcSubject<WorkspaceScoped, GetProviderKeyReply>('v1.engine-proxy.provider-key.get'),
  deleteProviderKey: rpcSubject<WorkspaceScoped, DeleteProviderKeyReply>('v1.engine-proxy.provider-key.delete'),
  testProviderKey: rpcSubject<TestProviderKeyRequest, TestProviderKeyReply>('v1.engine-proxy.provider-key.test'),
  /** Whether the workspace's runs use its own provider key or the service's shared key. */
  getSettings: rpcSubject<WorkspaceScoped, EngineSettingsReply>('v1.engine-proxy.settings.get'),
  setSettings: rpcSubject<SetEngineSettingsRequest, EngineSettingsReply>('v1.engine-proxy.settings.set'),
} as const;

export const ENGINE_BROADCASTS = {
  /** A workspace's provider key or key mode changed (payload: the workspace id). */
  credentialsChanged: broadcastSubject<string>('v1.engine-proxy.credentials.changed'),
} as const;

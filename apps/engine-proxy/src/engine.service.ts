import { Inject, Injectable, Optional } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import {
  AnswerQuestionsReply,
  AnswerQuestionsRequest,
  CompleteTextReply,
  CompleteTextRequest,
  EngineName,
  LlmProvider,
  ServiceError,
  TestProviderKeyReply,
  TestProviderKeyRequest,
} from '@ds/contracts';
import {
  anthropicBody,
  anthropicCompletionBody,
  AttemptFailure,
  checkAnswer,
  classifyStatus,
  estimatedCostUsd,
  modelLabel,
  networkFailure,
  openAiBody,
  openAiCompletionBody,
  parseAnthropicAnswer,
  parseAnthropicText,
  parseOpenAiAnswer,
  parseOpenAiText,
  ProviderAnswer,
  ProviderText,
  retryDelayMs,
  sharedKeyFingerprint,
} from '@ds/engine';
import { currentSpan, inSpan, Logger, Metrics, PLATFORM, SpanKind, tracer } from '@ds/platform';
import { EngineProxyConfig, ProviderEndpoint } from './config';
import { CredentialsService } from './credentials/credentials.service';
import { postJson, ProviderRequestFailed, ProviderResponse } from './provider-http';
import { QUEUE_FULL } from './slots/local-semaphore';
import { SharedSlots } from './slots/shared-slots';

const ANTHROPIC_VERSION = '2023-06-01';

/** Where one call goes and with which key; `sharedKey` names the shared credential whose slots it needs. */
interface Route {
  endpoint: ProviderEndpoint;
  apiKey: string | null;
  model: string;
  sharedKey: string | null;
}

/** A key test is one call, given this long. */
const KEY_TEST_TIMEOUT_MS = 15_000;

/** How one kind of call is written for, and read from, each provider protocol. */
interface CallShape<TRequest, TAnswer> {
  /** How errors name the call's deadline and what its answer must fit. */
  words: { deadline: string; contract: string };
  body(request: TRequest, model: string, anthropic: boolean): Record<string, unknown>;
  parse(body: unknown, anthropic: boolean, request: TRequest): TAnswer | string;
}

const ANSWER_SHAPE: CallShape<AnswerQuestionsRequest, ProviderAnswer> = {
  words: { deadline: 'the decision timeout', contract: 'outside the decision contract' },
  body: (request, model, anthropic) => (anthropic ? anthropicBody(request, model) : openAiBody(request, model)),
  parse: (body, anthropic, request) => (anthropic ? parseAnthropicAnswer(body) : parseOpenAiAnswer(body, request)),
};

const COMPLETION_SHAPE: CallShape<CompleteTextRequest, ProviderText> = {
  words: { deadline: 'the destination timeout', contract: 'without usable text' },
  body: (request, model, anthropic) => (anthropic ? anthropicCompletionBody(request, model) : openAiCompletionBody(request, model)),
  parse: (body, anthropic) => (anthropic ? parseAnthropicText(body) : parseOpenAiText(body)),
};

/**
 * One provider call answers every question. Transient failures are retried (at most twice) only while
 * the decision's deadline leaves room; the deadline covers the wait for a shared-key slot, every attempt
 * and every wait between attempts.
 */
@Injectable()
export class EngineService {
  private readonly sharedLlmKey: string | null;
  private readonly callUrls = new Map<string, URL>();
  private readonly attempts: Counter<'engine' | 'provider' | 'model' | 'outcome'> | null = null;
  private readonly attemptDuration: Histogram<'engine' | 'provider' | 'outcome'> | null = null;

  constructor(
    @Inject(PLATFORM.config) private readonly config: EngineProxyConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
    private readonly credentials: CredentialsService,
    private readonly slots: SharedSlots,
    @Optional() @Inject(PLATFORM.metrics) metrics?: Metrics,
  ) {
    const { llm } = config;
    this.sharedLlmKey = llm.apiKey ? sharedKeyFingerprint(llm.protocol, llm.baseUrl, llm.apiKey) : null;
    if (metrics) {
      this.attempts = new Counter({
        name: 'decision_service_engine_attempts_total',
        help: 'Calls to the engine provider (each retry counts), by engine, protocol, model (names from the price table, else other) and outcome (ok or the error code)',
        labelNames: ['engine', 'provider', 'model', 'outcome'],
        registers: [metrics.registry],
      });
      this.attemptDuration = new Histogram({
        name: 'decision_service_engine_attempt_duration_seconds',
        help: 'Duration of calls to the engine provider, by engine, protocol and outcome',
        labelNames: ['engine', 'provider', 'outcome'],
        buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120],
        registers: [metrics.registry],
      });
    }
  }

  async answer(request: AnswerQuestionsRequest): Promise<AnswerQuestionsReply> {
    const deadline = Date.now() + request.timeoutMs;
    const engine: EngineName = request.engine ?? (await this.credentials.forWorkspace(request.workspaceId)).defaultEngine ?? this.config.defaultEngine;
    const route = await this.route(engine, request);
    const answer = await this.callInSlot(route, ANSWER_SHAPE, request, deadline).catch((error: unknown) => {
      // The runner reports the engine that ran even when it falls back on the failure.
      if (error instanceof ServiceError) error.internal = { engine, model: route.model };
      throw error;
    });
    const model = route.model;
    const distributions = checkAnswer(request, answer.distributions);
    if (typeof distributions === 'string') throw new ServiceError('ENGINE_ERROR', `The engine answered outside the decision contract: ${distributions}.`);
    // The checkpoint engine is self-hosted: its name is the model, and it costs nothing per token.
    const reportedModel = engine === 'checkpoint' ? model : answer.model || model;
    const reply: AnswerQuestionsReply = {
      distributions,
      engine,
      model: reportedModel,
      inputTokens: answer.inputTokens,
      outputTokens: answer.outputTokens,
      estimatedCostUsd: engine === 'checkpoint' ? 0 : estimatedCostUsd(this.config.prices, reportedModel, answer.inputTokens),
    };
    if (answer.tokenDistributions) reply.tokenDistributions = answer.tokenDistributions;
    return reply;
  }

  /**
   * An llm destination: the llm engine's route (the workspace's own key when it chose it, else the shared key
   * within its slots), the destination's own deadline, the same retries. The reported model is the provider's.
   */
  async complete(request: CompleteTextRequest): Promise<CompleteTextReply> {
    const deadline = Date.now() + request.timeoutMs;
    const route = await this.route('llm', request);
    const answer = await this.callInSlot(route, COMPLETION_SHAPE, request, deadline);
    return { text: answer.text, model: answer.model || route.model, inputTokens: answer.inputTokens, outputTokens: answer.outputTokens };
  }

  /**
   * One small completion with a key, to tell an author whether it works before runs depend on it: the key given
   * (never saved here) or the saved one. No retries and no shared slots: it is the author's own key.
   */
  async testKey(request: TestProviderKeyRequest): Promise<TestProviderKeyReply> {
    const endpoint = this.config.llm;
    let key: { provider: LlmProvider; apiKey: string };
    if (request.provider === undefined || request.apiKey === undefined) {
      const credential = await this.credentials.forWorkspace(request.workspaceId);
      if (credential.unreadable) throw new ServiceError('ENGINE_NOT_CONFIGURED', 'The workspace’s provider key cannot be read on this service; save it again.');
      if (!credential.key) throw new ServiceError('NOT_FOUND', 'This workspace has no provider key saved.');
      key = credential.key;
    } else {
      key = { provider: request.provider, apiKey: request.apiKey };
    }
    const refused = (code: string, reason: string): TestProviderKeyReply => ({ ok: false, provider: key.provider, model: null, code, reason });
    if (key.provider !== endpoint.protocol)
      return refused('ENGINE_NOT_CONFIGURED', `This service’s llm engine speaks ${endpoint.protocol}; a ${key.provider} key cannot be used.`);
    if (!endpoint.model) return refused('ENGINE_NOT_CONFIGURED', 'The llm engine has no model configured on this service.');
    const route: Route = { endpoint, apiKey: key.apiKey, model: endpoint.model, sharedKey: null };
    const probe: CompleteTextRequest = {
      workspaceId: request.workspaceId,
      model: null,
      prompt: 'Reply with the word OK.',
      input: 'OK?',
      maxTokens: 5,
      temperature: 0,
      timeoutMs: KEY_TEST_TIMEOUT_MS,
    };
    const outcome = await this.attempt(route, COMPLETION_SHAPE, probe, Date.now() + KEY_TEST_TIMEOUT_MS);
    if (isFailure(outcome)) return refused(outcome.code, outcome.reason);
    return { ok: true, provider: key.provider, model: outcome.model || endpoint.model, code: null, reason: null };
  }

  private async callInSlot<TRequest, TAnswer extends object>(
    route: Route,
    shape: CallShape<TRequest, TAnswer>,
    request: TRequest,
    deadline: number,
  ): Promise<TAnswer> {
    const lease = route.sharedKey === null ? null : await this.slots.acquire(route.sharedKey, deadline);
    if (lease === QUEUE_FULL) {
      const retryAfter = this.slots.retryAfterSeconds();
      throw new ServiceError('ENGINE_RATE_LIMITED', `The shared engine key is at its limit and its queue is full; retry after ${retryAfter} seconds.`, {
        retryAfter,
      });
    }
    if (route.sharedKey !== null && lease === null) {
      throw new ServiceError('ENGINE_RATE_LIMITED', 'No slot on the shared engine key became free within the timeout.');
    }
    try {
      return await this.callWithRetries(route, shape, request, deadline);
    } finally {
      lease?.release();
    }
  }

  /**
   * The checkpoint engine is self-hosted: its optional key is the operator's and no slots apply. The llm
   * engine uses the workspace's own key when the workspace chose it (424 without one), else the shared key.
   */
  private async route(engine: EngineName, request: { workspaceId: string; model: string | null }): Promise<Route> {
    if (engine === 'checkpoint') {
      const endpoint = this.config.checkpoint;
      if (!endpoint.baseUrl || !endpoint.model) throw new ServiceError('ENGINE_NOT_CONFIGURED', 'The checkpoint engine is not configured on this service.');
      return { endpoint, apiKey: endpoint.apiKey, model: endpoint.model, sharedKey: null };
    }
    const endpoint = this.config.llm;
    const model = request.model ?? endpoint.model;
    if (!model) throw new ServiceError('ENGINE_NOT_CONFIGURED', 'The llm engine has no model configured, and the decision names none.');
    const credential = await this.credentials.forWorkspace(request.workspaceId);
    if (credential.useOwnKey) {
      if (credential.unreadable) throw new ServiceError('ENGINE_NOT_CONFIGURED', 'The workspace’s provider key cannot be read on this service; save it again.');
      if (!credential.key) throw new ServiceError('ENGINE_NOT_CONFIGURED', 'The workspace uses its own provider key, and none is saved.');
      if (credential.key.provider !== endpoint.protocol) {
        throw new ServiceError(
          'ENGINE_NOT_CONFIGURED',
          `The workspace’s provider key is for ${credential.key.provider}, but this service’s llm engine speaks ${endpoint.protocol}.`,
        );
      }
      return { endpoint, apiKey: credential.key.apiKey, model, sharedKey: null };
    }
    if (!endpoint.apiKey || !this.sharedLlmKey)
      throw new ServiceError('ENGINE_NOT_CONFIGURED', 'The llm engine has no shared provider key configured on this service.');
    return { endpoint, apiKey: endpoint.apiKey, model, sharedKey: this.sharedLlmKey };
  }

  private async callWithRetries<TRequest, TAnswer extends object>(
    route: Route,
    shape: CallShape<TRequest, TAnswer>,
    request: TRequest,
    deadline: number,
  ): Promise<TAnswer> {
    for (let retry = 0; ; retry++) {
      const outcome = await this.attempt(route, shape, request, deadline);
      if (!isFailure(outcome)) return outcome;
      const delay = retryDelayMs(outcome, retry + 1, deadline - Date.now());
      if (delay === null) throw this.toError(outcome, shape.words);
      this.logger.warn({ code: outcome.code, reason: outcome.reason, retry: retry + 1, delayMs: delay }, 'retrying the engine call');
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  /** One provider call, counted and (with tracing on) given a span of its own. */
  private async attempt<TRequest, TAnswer extends object>(
    route: Route,
    shape: CallShape<TRequest, TAnswer>,
    request: TRequest,
    deadline: number,
  ): Promise<TAnswer | AttemptFailure> {
    const started = process.hrtime.bigint();
    const engine = route.endpoint === this.config.checkpoint ? 'checkpoint' : 'llm';
    const provider = route.endpoint.protocol;
    const model = modelLabel(this.config.prices, route.model);
    // With tracing off the attempt runs bare: no span, no closure, no exception to carry a failure out.
    const outcome =
      tracer === null
        ? await this.attemptOnce(route, shape, request, deadline)
        : await inSpan(`engine ${provider}`, SpanKind.CLIENT, { 'gen_ai.system': provider, 'gen_ai.request.model': model }, currentSpan(), async () => {
            const result = await this.attemptOnce(route, shape, request, deadline);
            if (isFailure(result)) throw new AttemptFailed(result);
            return result;
          }).catch((error: unknown) => {
            if (error instanceof AttemptFailed) return error.failure;
            throw error;
          });
    const code = isFailure(outcome) ? outcome.code : 'ok';
    this.attempts?.inc({ engine, provider, model, outcome: code });
    this.attemptDuration?.observe({ engine, provider, outcome: code }, Number(process.hrtime.bigint() - started) / 1e9);
    return outcome;
  }

  private async attemptOnce<TRequest, TAnswer extends object>(
    { endpoint, apiKey, model }: Route,
    shape: CallShape<TRequest, TAnswer>,
    request: TRequest,
    deadline: number,
  ): Promise<TAnswer | AttemptFailure> {
    const msLeft = deadline - Date.now();
    if (msLeft <= 0) return { code: 'ENGINE_TIMEOUT', retryable: false, retryAfterSeconds: null, reason: 'deadline reached' };
    const anthropic = endpoint.protocol === 'anthropic';
    const url = this.callUrl(endpoint.baseUrl, anthropic);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (anthropic) {
      headers['x-api-key'] = apiKey ?? '';
      headers['anthropic-version'] = ANTHROPIC_VERSION;
    } else if (apiKey) {
      headers.authorization = `Bearer ${apiKey}`;
    }
    const body = JSON.stringify(shape.body(request, model, anthropic));
    let response: ProviderResponse;
    try {
      response = await postJson(url, headers, body, AbortSignal.timeout(msLeft));
    } catch (error) {
      if (!(error instanceof ProviderRequestFailed)) throw error;
      if (error.timedOut) return { code: 'ENGINE_TIMEOUT', retryable: false, retryAfterSeconds: null, reason: 'deadline reached' };
      return networkFailure(error.message);
    }
    const { status, text } = response;
    if (status < 200 || status > 299) return classifyStatus(status, providerReason(text), response.retryAfter);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { code: 'ENGINE_ERROR', retryable: false, retryAfterSeconds: null, reason: 'the provider answered with something that is not JSON' };
    }
    const answer = shape.parse(parsed, anthropic, request);
    if (typeof answer === 'string') return { code: 'ENGINE_ERROR', retryable: false, retryAfterSeconds: null, reason: answer };
    return answer;
  }

  /** Endpoints come from configuration, so their few URLs are built once rather than parsed per call. */
  private callUrl(baseUrl: string, anthropic: boolean): URL {
    const key = `${anthropic ? 'a' : 'o'} ${baseUrl}`;
    let url = this.callUrls.get(key);
    if (!url) {
      url = new URL(anthropic ? `${baseUrl.replace(/\/$/, '')}/v1/messages` : `${baseUrl.replace(/\/$/, '')}/chat/completions`);
      this.callUrls.set(key, url);
    }
    return url;
  }

  private toError(failure: AttemptFailure, words: CallShape<unknown, object>['words']): ServiceError {
    const messages: Record<string, string> = {
      ENGINE_TIMEOUT: `The engine did not answer within ${words.deadline}.`,
      ENGINE_RATE_LIMITED: 'The engine provider is overloaded or rate limited.',
      ENGINE_UNAVAILABLE: 'The engine provider failed or could not be reached.',
      ENGINE_AUTH_FAILED: 'The engine provider rejected the engine key.',
      ENGINE_INVALID_REQUEST: `The engine provider rejected the request: ${failure.reason}`,
      ENGINE_ERROR: `The engine answered ${words.contract}: ${failure.reason}.`,
    };
    return new ServiceError(failure.code, messages[failure.code] ?? failure.reason);
  }
}

/** Carries a failed attempt through its span, so that the span records the failure's code. */
class AttemptFailed extends Error {
  readonly code: string;
  constructor(readonly failure: AttemptFailure) {
    super(failure.code);
    this.code = failure.code;
  }
}

function isFailure<TAnswer extends object>(outcome: TAnswer | AttemptFailure): outcome is AttemptFailure {
  return 'retryable' in outcome && 'code' in outcome;
}

/** The provider's own words about a rejection, from either protocol's error body. */
function providerReason(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    if (typeof body.error === 'object' && body.error?.message) return body.error.message;
    if (typeof body.error === 'string') return body.error;
    if (body.message) return body.message;
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, 300);
}

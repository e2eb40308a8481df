import { Inject, Injectable } from '@nestjs/common';
import { AnswerQuestionsReply, AnswerQuestionsRequest, EngineName, ServiceError } from '@ds/contracts';
import {
  anthropicBody,
  AttemptFailure,
  checkAnswer,
  classifyStatus,
  estimatedCostUsd,
  networkFailure,
  openAiBody,
  parseAnthropicAnswer,
  parseOpenAiAnswer,
  ProviderAnswer,
  retryDelayMs,
} from '@ds/engine';
import { Logger, PLATFORM } from '@ds/platform';
import { EngineProxyConfig, ProviderEndpoint } from './config';

const ANTHROPIC_VERSION = '2023-06-01';

/**
 * One provider call answers every question. Transient failures are retried (at most twice) only while
 * the decision's deadline leaves room; the deadline covers every attempt and every wait.
 */
@Injectable()
export class EngineService {
  constructor(
    @Inject(PLATFORM.config) private readonly config: EngineProxyConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {}

  async answer(request: AnswerQuestionsRequest): Promise<AnswerQuestionsReply> {
    const engine: EngineName = request.engine ?? this.config.defaultEngine;
    const endpoint = engine === 'llm' ? this.config.llm : this.config.checkpoint;
    const model = engine === 'llm' ? (request.model ?? endpoint.model) : endpoint.model;
    if (!endpoint.baseUrl || !model || (engine === 'llm' && !endpoint.apiKey)) {
      throw new ServiceError('ENGINE_NOT_CONFIGURED', `The ${engine} engine has no usable credential or model configured.`);
    }
    const deadline = Date.now() + request.timeoutMs;
    const answer = await this.callWithRetries(endpoint, request, model, deadline);
    const distributions = checkAnswer(request, answer.distributions);
    if (typeof distributions === 'string') throw new ServiceError('ENGINE_ERROR', `The engine answered outside the decision contract: ${distributions}.`);
    // The checkpoint engine is self-hosted: its name is the model, and it costs nothing per token.
    const reportedModel = engine === 'checkpoint' ? model : answer.model || model;
    return {
      distributions,
      engine,
      model: reportedModel,
      inputTokens: answer.inputTokens,
      outputTokens: answer.outputTokens,
      estimatedCostUsd: engine === 'checkpoint' ? 0 : estimatedCostUsd(this.config.prices, reportedModel, answer.inputTokens),
    };
  }

  private async callWithRetries(endpoint: ProviderEndpoint, request: AnswerQuestionsRequest, model: string, deadline: number): Promise<ProviderAnswer> {
    for (let retry = 0; ; retry++) {
      const outcome = await this.attempt(endpoint, request, model, deadline);
      if (!isFailure(outcome)) return outcome;
      const delay = retryDelayMs(outcome, retry + 1, deadline - Date.now());
      if (delay === null) throw this.toError(outcome);
      this.logger.warn({ code: outcome.code, reason: outcome.reason, retry: retry + 1, delayMs: delay }, 'retrying the engine call');
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  private async attempt(endpoint: ProviderEndpoint, request: AnswerQuestionsRequest, model: string, deadline: number): Promise<ProviderAnswer | AttemptFailure> {
    const msLeft = deadline - Date.now();
    if (msLeft <= 0) return { code: 'ENGINE_TIMEOUT', retryable: false, retryAfterSeconds: null, reason: 'deadline reached' };
    const anthropic = endpoint.protocol === 'anthropic';
    const url = anthropic ? `${endpoint.baseUrl.replace(/\/$/, '')}/v1/messages` : `${endpoint.baseUrl.replace(/\/$/, '')}/chat/completions`;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (anthropic) {
      headers['x-api-key'] = endpoint.apiKey ?? '';
      headers['anthropic-version'] = ANTHROPIC_VERSION;
    } else if (endpoint.apiKey) {
      headers.authorization = `Bearer ${endpoint.apiKey}`;
    }
    const body = JSON.stringify(anthropic ? anthropicBody(request, model) : openAiBody(request, model));
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(msLeft) });
      text = await response.text();
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') return { code: 'ENGINE_TIMEOUT', retryable: false, retryAfterSeconds: null, reason: 'deadline reached' };
      return networkFailure((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message);
    }
    if (!response.ok) return classifyStatus(response.status, providerReason(text), response.headers.get('retry-after'));
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { code: 'ENGINE_ERROR', retryable: false, retryAfterSeconds: null, reason: 'the provider answered with something that is not JSON' };
    }
    const answer = anthropic ? parseAnthropicAnswer(parsed) : parseOpenAiAnswer(parsed);
    if (typeof answer === 'string') return { code: 'ENGINE_ERROR', retryable: false, retryAfterSeconds: null, reason: answer };
    return answer;
  }

  private toError(failure: AttemptFailure): ServiceError {
    const messages: Record<string, string> = {
      ENGINE_TIMEOUT: 'The engine did not answer within the decision timeout.',
      ENGINE_RATE_LIMITED: 'The engine provider is overloaded or rate limited.',
      ENGINE_UNAVAILABLE: 'The engine provider failed or could not be reached.',
      ENGINE_AUTH_FAILED: 'The engine provider rejected the engine key.',
      ENGINE_INVALID_REQUEST: `The engine provider rejected the request: ${failure.reason}`,
      ENGINE_ERROR: `The engine answered outside the decision contract: ${failure.reason}.`,
    };
    return new ServiceError(failure.code, messages[failure.code] ?? failure.reason);
  }
}

function isFailure(outcome: ProviderAnswer | AttemptFailure): outcome is AttemptFailure {
  return 'retryable' in outcome;
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

import { Inject, Injectable } from '@nestjs/common';
import { JetStreamClient } from 'nats';
import { Counter, Histogram } from 'prom-client';
import { CompleteTextRequest, DELIVERY_STREAM, DeliveryMessage, ServiceError, SUBJECTS } from '@ds/contracts';
import {
  AgentCall,
  agentAnsweredEntry,
  DestinationEntry,
  failedEntry,
  fillSecretsFrom,
  LlmCall,
  llmCompletedEntry,
  secretsNotSet,
  WaitingCall,
} from '@ds/decision-schema';
import { Logger, Metrics, OutboundFailed, outboundRequest, OutboundRefused, PLATFORM, publishTraced, RpcClient } from '@ds/platform';
import { DecisionRunnerConfig } from '../config';
import { RUNNER_JETSTREAM } from './jetstream';
import { ENGINE_REPLY_MARGIN_MS } from './run-executor';

/**
 * Bytes of a sync agent's answer read at most. The spec returns answers up to 16,000 characters and `reply`
 * of any answer; past 1 MiB the answer is not read and the call fails, so that an agent cannot make the runner
 * hold an unbounded body.
 */
const AGENT_ANSWER_MAX_BYTES = 1_048_576;

/** How long JetStream may take to store a delivery before the publish is tried once more (same message id). */
const PUBLISH_TIMEOUT_MS = 2_000;

/** The entry a waiting call or a planned delivery settles: planDestinations gives each its own entry's position. */
export function entryAt(entries: DestinationEntry[], index: number): DestinationEntry {
  const entry = entries[index];
  if (entry === undefined) throw new Error(`The destination plan has no entry at position ${index}.`);
  return entry;
}

/**
 * The destinations of step 10 that leave the runner: llm and sync agent calls, which the caller waits for, and
 * deliveries, which are stored in JetStream for the delivery service before the run answers.
 */
@Injectable()
export class DestinationCalls {
  private readonly outcomes: Counter<'type' | 'outcome'>;
  private readonly durations: Histogram<'type'>;

  constructor(
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    @Inject(RUNNER_JETSTREAM) private readonly jetstream: JetStreamClient,
    @Inject(PLATFORM.config) private readonly config: DecisionRunnerConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
    @Inject(PLATFORM.metrics) metrics: Metrics,
  ) {
    this.outcomes = new Counter({
      name: 'decision_service_destination_outcomes_total',
      help: 'Destinations that call out, by type and outcome (completed, failed, queued, unavailable)',
      labelNames: ['type', 'outcome'],
      registers: [metrics.registry],
    });
    this.durations = new Histogram({
      name: 'decision_service_destination_wait_seconds',
      help: 'Time the caller waited for an llm or sync agent destination',
      labelNames: ['type'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 20, 25, 30],
      registers: [metrics.registry],
    });
  }

  /** Runs every waiting call at once and settles its entry; never throws. */
  async wait(workspaceId: string, calls: WaitingCall[], entries: DestinationEntry[]): Promise<void> {
    await Promise.all(
      calls.map(async (call) => {
        const started = performance.now();
        const planned = entryAt(entries, call.index);
        const entry = call.kind === 'llm' ? await this.completeLlm(workspaceId, call, planned) : await this.callAgent(workspaceId, call, planned);
        entries[call.index] = entry;
        this.durations.observe({ type: call.kind }, (performance.now() - started) / 1000);
        this.outcomes.inc({ type: call.kind, outcome: String(entry.status) });
      }),
    );
  }

  /**
   * Stores each delivery in the DELIVERIES stream, its id as the message id so that a retried publish is stored
   * once. Answers, per message, whether it was stored.
   */
  async publish(messages: DeliveryMessage[]): Promise<boolean[]> {
    return Promise.all(
      messages.map(async (message) => {
        const stored = await this.publishOne(message);
        this.outcomes.inc({ type: message.kind, outcome: stored ? 'queued' : 'unavailable' });
        return stored;
      }),
    );
  }

  private async publishOne(message: DeliveryMessage): Promise<boolean> {
    const subject = DELIVERY_STREAM.subjectFor(message.workspaceId);
    const data = JSON.stringify(message);
    for (let attempt = 1; ; attempt++) {
      try {
        await publishTraced(this.jetstream, DELIVERY_STREAM.name, subject, data, { msgID: message.deliveryId, timeout: PUBLISH_TIMEOUT_MS });
        return true;
      } catch (error) {
        // A timed-out publish may have been stored; the second try with the same id is then a duplicate JetStream drops.
        const retry = attempt === 1 && /timeout/i.test((error as Error)?.message ?? '');
        if (!retry) {
          this.logger.warn({ err: error, deliveryId: message.deliveryId, destination: message.destinationKey }, 'could not queue a delivery');
          return false;
        }
      }
    }
  }

  private async completeLlm(workspaceId: string, call: LlmCall, entry: DestinationEntry): Promise<DestinationEntry> {
    const { destination } = call;
    const request: CompleteTextRequest = {
      workspaceId,
      model: destination.model,
      prompt: call.prompt,
      input: call.input,
      maxTokens: destination.maxTokens,
      temperature: destination.temperature,
      timeoutMs: destination.timeoutMs,
    };
    try {
      const answer = await this.rpc.call(SUBJECTS.engine.complete, request, { timeoutMs: destination.timeoutMs + ENGINE_REPLY_MARGIN_MS });
      return llmCompletedEntry(entry, answer);
    } catch (error) {
      if (!(error instanceof ServiceError)) this.logger.error({ err: error, destination: destination.key }, 'an llm destination failed unexpectedly');
      return failedEntry(entry, error instanceof ServiceError ? `${error.code}: ${error.message}` : 'The llm call failed.');
    }
  }

  /**
   * The agent's headers with `{{secrets.NAME}}` filled in from the delivery service, which holds the workspace's
   * secrets; asked only when a header refers to one. A secret that is not set fails the call rather than sending
   * the header without it.
   */
  private async agentHeaders(
    workspaceId: string,
    headers: Readonly<Record<string, string>>,
  ): Promise<{ headers: Record<string, string> } | { failure: string }> {
    try {
      const filled = await fillSecretsFrom(headers, async (names) => (await this.rpc.call(SUBJECTS.delivery.resolveSecrets, { workspaceId, names })).values);
      return 'missing' in filled ? { failure: `The agent was not called: ${secretsNotSet(filled.missing)}` } : filled;
    } catch (error) {
      this.logger.warn({ err: error }, "could not read an agent call's workspace secrets");
      return { failure: "The workspace's secrets could not be read; the agent was not called." };
    }
  }

  private async callAgent(workspaceId: string, call: AgentCall, entry: DestinationEntry): Promise<DestinationEntry> {
    const { destination } = call;
    const headers = await this.agentHeaders(workspaceId, destination.headers);
    if ('failure' in headers) return failedEntry(entry, headers.failure);
    try {
      const response = await outboundRequest({
        method: 'POST',
        url: destination.url,
        headers: { ...headers.headers, 'content-type': 'application/json', 'user-agent': 'decision-service-agent/1' },
        body: call.body,
        timeoutMs: destination.timeoutMs,
        maxResponseBytes: AGENT_ANSWER_MAX_BYTES,
        allowPrivateTargets: this.config.allowPrivateTargets,
      });
      if (response.status >= 300 && response.status < 400) return failedEntry(entry, `The agent answered ${response.status}; redirects are not followed.`);
      if (response.status < 200 || response.status > 299) return failedEntry(entry, `The agent answered ${response.status}.`);
      if (response.truncated) return failedEntry(entry, `The agent's answer is larger than ${AGENT_ANSWER_MAX_BYTES} bytes.`);
      return agentAnsweredEntry(entry, response.text);
    } catch (error) {
      // The entry reaches API keys and MCP clients, which never see a destination's URL: the host and the address
      // it resolved to go to the log, for whoever runs the service.
      if (error instanceof OutboundRefused) {
        this.logger.warn({ destination: destination.key, reason: error.message }, "an agent's URL was refused");
        return failedEntry(entry, "The agent's URL is not allowed: only https URLs of public addresses are called.");
      }
      if (error instanceof OutboundFailed) {
        if (error.timedOut) return failedEntry(entry, `The agent did not answer within ${destination.timeoutMs} ms.`);
        this.logger.warn({ destination: destination.key, reason: error.message }, 'an agent could not be reached');
        return failedEntry(entry, 'The agent could not be reached.');
      }
      this.logger.error({ err: error, destination: destination.key }, 'a sync agent call failed unexpectedly');
      return failedEntry(entry, 'The agent call failed.');
    }
  }
}

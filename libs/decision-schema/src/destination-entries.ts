import type { DestinationMatch } from './destinations';
import { FUNCTION_PARAMS_MAX, HTTP_BODY_MAX, PROMPT_MAX, REPLY_TEXT_MAX, SYNC_AGENT_RESPONSE_MAX } from './limits';
import { renderTemplateWithin, type TemplateFormat } from './param-template';
import type { AgentDestination, HttpDestination, LlmDestination, WebhookDestination, WorkflowDestination } from './schema-types';

/** One element of a run response's `destinations` array. */
export type DestinationEntry = Record<string, unknown> & { key: string; type: string };

/** An llm destination to call: its prompt and input rendered. */
export interface LlmCall {
  kind: 'llm';
  /** Position of its entry in `entries`. */
  index: number;
  destination: LlmDestination;
  prompt: string;
  input: string;
}

/** A sync agent to call: the exact body to POST. */
export interface AgentCall {
  kind: 'agent';
  index: number;
  destination: AgentDestination;
  body: string;
}

export type WaitingCall = LlmCall | AgentCall;

export type DeliveredDestination = WebhookDestination | HttpDestination | WorkflowDestination | AgentDestination;

/** A destination to hand to the delivery service once the run's response is final. */
export interface PlannedDelivery {
  index: number;
  destination: DeliveredDestination;
  params: Record<string, unknown>;
  /** Agent instructions as rendered (async agents only). */
  instructions: string | null;
  /** An http destination's rendered body (null: none); the other kinds' bodies wrap the final response. */
  httpBody: string | null;
}

/** What the run does for its destinations: the entries as far as they are known, and the calls still to make. */
export interface DestinationPlan {
  /** In schema order; an entry of a call or a delivery holds only key and type until it is settled. */
  entries: DestinationEntry[];
  waiting: WaitingCall[];
  deliveries: PlannedDelivery[];
}

/** What the destinations may read of the run: its state, and the response before its destinations. */
export interface RunData {
  state: unknown;
  livemode: boolean;
  /**
   * decision_id, execution_id, schema, version, result, confidence, scores, composites, action, action_reason,
   * metrics: asked for only by a destination that sends it (an llm without input, a sync agent), so that a run
   * whose destinations are replies and deliveries builds no copy of it.
   */
  response: () => Readonly<Record<string, unknown>>;
}

/**
 * The response entries of the destinations that matched, in schema order, and the calls their kinds need.
 * Replies and functions are answered in the response itself and carry no status. llm and sync agents become
 * waiting calls; webhooks, http, workflows and async agents become deliveries.
 *
 * The spec's destination limits hold for what a run renders, not only for what a schema says: a reply whose
 * text renders past 4,000 characters, a function whose params serialize past FUNCTION_PARAMS_MAX, a prompt,
 * input or instructions past 8,000, or an http body past 10,000, is skipped with reason `limit` ("a matching
 * destination beyond these limits is skipped"), never truncated.
 */
export function planDestinations(matches: DestinationMatch[], run: RunData): DestinationPlan {
  const entries: DestinationEntry[] = [];
  const waiting: WaitingCall[] = [];
  const deliveries: PlannedDelivery[] = [];
  const limit = (entry: DestinationEntry) => ({ ...entry, status: 'skipped', reason: 'limit' });
  for (const { destination, params, skipped } of matches) {
    const index = entries.length;
    const entry: DestinationEntry = { key: destination.key, type: destination.type };
    if (skipped) {
      entries.push({ ...entry, status: 'skipped', ...skipped });
      continue;
    }
    switch (destination.type) {
      case 'reply': {
        const text = renderTemplateWithin(destination.text, params, REPLY_TEXT_MAX);
        if (text === null) entries.push(limit(entry));
        else entries.push(destination.buttons.length > 0 ? { ...entry, text, buttons: destination.buttons } : { ...entry, text });
        break;
      }
      case 'function':
        entries.push(fitsWithin(params, FUNCTION_PARAMS_MAX) ? { ...entry, function: destination.function, params } : limit(entry));
        break;
      case 'llm': {
        const prompt = renderTemplateWithin(destination.prompt, params, PROMPT_MAX);
        const input = destination.input === null ? llmDefaultInput(run) : renderTemplateWithin(destination.input, params, PROMPT_MAX);
        if (prompt === null || input === null) {
          entries.push(limit(entry));
          break;
        }
        entries.push(entry);
        waiting.push({ kind: 'llm', index, destination, prompt, input });
        break;
      }
      case 'agent': {
        const instructions = destination.instructions === null ? null : renderTemplateWithin(destination.instructions, params, PROMPT_MAX);
        if (destination.instructions !== null && instructions === null) {
          entries.push(limit(entry));
          break;
        }
        entries.push(entry);
        if (destination.mode === 'sync') waiting.push({ kind: 'agent', index, destination, body: syncAgentBody(destination, instructions, params, run) });
        else deliveries.push({ index, destination, params, instructions, httpBody: null });
        break;
      }
      case 'http': {
        const httpBody = destination.body === null ? null : renderTemplateWithin(destination.body, params, HTTP_BODY_MAX, httpBodyFormat(destination.body));
        if (destination.body !== null && httpBody === null) {
          entries.push(limit(entry));
          break;
        }
        entries.push(entry);
        deliveries.push({ index, destination, params, instructions: null, httpBody });
        break;
      }
      case 'webhook':
      case 'workflow':
        entries.push(entry);
        deliveries.push({ index, destination, params, instructions: null, httpBody: null });
        break;
    }
  }
  return { entries, waiting, deliveries };
}

/**
 * An llm destination without `input` reads the run as JSON: its state and what the decision concluded.
 * (The prompt says what to do with it.)
 */
function llmDefaultInput(run: RunData): string {
  const { result, confidence, scores, composites, action } = run.response();
  return JSON.stringify({ state: run.state, result, confidence, scores, composites, action });
}

/** What a sync agent is POSTed: its instructions and tools, the params, and the run's data. */
function syncAgentBody(destination: AgentDestination, instructions: string | null, params: Record<string, unknown>, run: RunData): string {
  return JSON.stringify({ destination: destination.key, livemode: run.livemode, instructions, tools: destination.tools, params, data: run.response() });
}

/** A body template that is a JSON document gets its text values escaped for JSON; anything else is sent as text. */
export function httpBodyFormat(template: string): TemplateFormat {
  const start = template.trimStart()[0];
  return start === '{' || start === '[' ? 'json' : 'text';
}

// ---- settling waiting calls ----------------------------------------------------------------------------------

export function llmCompletedEntry(
  entry: DestinationEntry,
  answer: { text: string; model: string; inputTokens: number; outputTokens: number },
): DestinationEntry {
  return {
    ...entry,
    status: 'completed',
    text: answer.text,
    model: answer.model,
    usage: { input_tokens: answer.inputTokens, output_tokens: answer.outputTokens },
  };
}

export function failedEntry(entry: DestinationEntry, error: string): DestinationEntry {
  return { ...entry, status: 'failed', error };
}

/**
 * A sync agent's 2xx answer: `reply` is the answer's `reply` field when it is a string (null otherwise, or when
 * the answer is not a JSON object); `response` is the whole answer (parsed JSON, else its text), null when the
 * answer is longer than 16,000 characters.
 */
export function agentAnsweredEntry(entry: DestinationEntry, answerText: string): DestinationEntry {
  let answer: unknown = answerText;
  try {
    answer = JSON.parse(answerText);
  } catch {
    // Not JSON: the answer is its text.
  }
  const replyField = typeof answer === 'object' && answer !== null && !Array.isArray(answer) ? (answer as Record<string, unknown>).reply : undefined;
  return {
    ...entry,
    status: 'completed',
    reply: typeof replyField === 'string' ? replyField : null,
    response: answerText.length > SYNC_AGENT_RESPONSE_MAX ? null : answer,
  };
}

export function queuedEntry(entry: DestinationEntry, deliveryId: string): DestinationEntry {
  return { ...entry, status: 'queued', delivery_id: deliveryId };
}

export function unavailableEntry(entry: DestinationEntry): DestinationEntry {
  return { key: entry.key, type: entry.type, status: 'skipped', reason: 'unavailable' };
}

// ---- delivery bodies -----------------------------------------------------------------------------------------

export interface DeliveryEnvelope {
  deliveryId: string;
  /** Unix seconds. */
  created: number;
  livemode: boolean;
  /** The run response, serialised once, exactly as the caller receives it. */
  responseJson: string;
}

/**
 * The exact body a delivery sends. A webhook gets the `decision.completed` event; a workflow the same envelope
 * with the destination's key and params; an async agent its hand-off (instructions, tools, params); http its
 * rendered template. The response is spliced in as the text it already is, never serialised again.
 */
export function deliveryBody(planned: PlannedDelivery, envelope: DeliveryEnvelope): string {
  const { destination } = planned;
  const head = { id: envelope.deliveryId, created: envelope.created, livemode: envelope.livemode };
  switch (destination.type) {
    case 'http':
      return planned.httpBody ?? '';
    case 'webhook':
      return withData({ id: head.id, type: 'decision.completed', created: head.created, livemode: head.livemode }, envelope.responseJson);
    case 'workflow':
      return withData({ ...head, type: 'workflow.run', destination: destination.key, params: planned.params }, envelope.responseJson);
    case 'agent':
      return withData(
        { ...head, type: 'agent.handoff', destination: destination.key, instructions: planned.instructions, tools: destination.tools, params: planned.params },
        envelope.responseJson,
      );
  }
}

/** The method and headers of a delivery: http as declared; every other kind POSTs JSON. */
export function deliveryRequest(planned: PlannedDelivery): { method: string; headers: Record<string, string> } {
  const { destination } = planned;
  const headers: Record<string, string> = { ...destination.headers };
  const declared = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
  if (destination.type !== 'http') {
    if (!declared.has('content-type')) headers['content-type'] = 'application/json';
    return { method: 'POST', headers };
  }
  if (planned.httpBody !== null && !declared.has('content-type')) {
    headers['content-type'] = destination.body !== null && httpBodyFormat(destination.body) === 'json' ? 'application/json' : 'text/plain; charset=utf-8';
  }
  return { method: destination.method, headers };
}

function withData(head: Record<string, unknown>, dataJson: string): string {
  return `${JSON.stringify(head).slice(0, -1)},"data":${dataJson}}`;
}

/** Whether the params serialize to at most maxLength characters, stopping at the first param that passes it. */
function fitsWithin(params: Readonly<Record<string, unknown>>, maxLength: number): boolean {
  // The braces, and a comma between entries: exactly JSON.stringify(params).length.
  let length = 1;
  for (const [name, value] of Object.entries(params)) {
    length += JSON.stringify(name).length + 1 + (JSON.stringify(value) ?? 'null').length + 1;
    if (length > maxLength) return false;
  }
  return true;
}

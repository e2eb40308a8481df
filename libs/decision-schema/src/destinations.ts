// Which destinations a run fires (step 10), with their params resolved. Sending is the runner's job.
import { conditionHolds } from './conditions';
import type { Evaluation } from './evaluate';
import { isRecord, ownValue } from './json';
import { DESTINATIONS_FIRING_MAX, WAITING_DESTINATIONS_MAX } from './limits';
import type { NormalizedDestination, NormalizedSchema, ParamSpec } from './schema-types';

export interface RunContext {
  state: unknown;
  decisionId: string;
  executionId: string;
}

export type SkipReason = { reason: 'missing_param'; param: string } | { reason: 'limit' };

export interface DestinationMatch {
  destination: NormalizedDestination;
  /** Every declared param, null where its path found no value. */
  params: Record<string, unknown>;
  /** Set when the destination matched but does not fire. */
  skipped?: SkipReason;
}

/** LLM answers and sync agents hold the response until they finish. */
export function makesCallerWait(destination: NormalizedDestination): boolean {
  return destination.type === 'llm' || (destination.type === 'agent' && destination.mode === 'sync');
}

/**
 * The destinations whose `when` conditions all hold, in schema order. A matched destination is skipped for a
 * missing required param first; the limits (10 firing, 3 that make the caller wait) then count only the
 * destinations that fire, so one skipped for a missing param does not use up a slot.
 */
export function matchingDestinations(schema: NormalizedSchema, evaluation: Evaluation, context: RunContext): DestinationMatch[] {
  const matches: DestinationMatch[] = [];
  let firing = 0;
  let waiting = 0;
  for (const destination of schema.destinations) {
    // Fires when a review is resolved, never after the run.
    if (destination.type === 'webhook' && destination.on === 'reviewed') continue;
    if (!destination.when.every((condition) => conditionHolds(condition, evaluation, schema))) continue;
    const params = resolveParams(destination.params, evaluation, context);
    const missing = Object.entries(destination.params).find(([name, spec]) => 'from' in spec && spec.required && params[name] === null);
    if (missing) {
      matches.push({ destination, params, skipped: { reason: 'missing_param', param: missing[0] } });
      continue;
    }
    const waits = makesCallerWait(destination);
    if (firing >= DESTINATIONS_FIRING_MAX || (waits && waiting >= WAITING_DESTINATIONS_MAX)) {
      matches.push({ destination, params, skipped: { reason: 'limit' } });
      continue;
    }
    firing++;
    if (waits) waiting++;
    matches.push({ destination, params });
  }
  return matches;
}

function resolveParams(specs: Record<string, ParamSpec>, evaluation: Evaluation, context: RunContext): Record<string, unknown> {
  return Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, 'from' in spec ? resolvePath(spec.from, evaluation, context) : spec.value]));
}

/** A dotted path into the run; null where it leads nowhere. List items are addressed by index: `state.0.name`. */
export function resolvePath(path: string, evaluation: Evaluation, context: RunContext): unknown {
  // split always returns at least one part.
  const [root = '', ...rest] = path.split('.');
  const roots: Record<string, unknown> = {
    state: context.state,
    result: evaluation.result,
    confidence: evaluation.confidence,
    scores: evaluation.scores,
    composites: evaluation.composites,
    action: evaluation.action,
    decision_id: context.decisionId,
    execution_id: context.executionId,
  };
  let value: unknown = ownValue(roots, root);
  for (const segment of rest) {
    if (Array.isArray(value) && /^\d+$/.test(segment)) value = value[Number(segment)];
    else if (isRecord(value)) value = ownValue(value, segment);
    else value = undefined;
  }
  return value ?? null;
}

import { Injectable } from '@nestjs/common';
import { PlaygroundRunRequest, ServiceError } from '@ds/contracts';
import {
  planDestinations,
  DestinationEntry,
  matchingDestinations,
  NormalizedSchema,
  parseVersionNumber,
  validateSchema,
  validateState,
} from '@ds/decision-schema';
import { newId } from '@ds/ids';
import { currentRequestId } from '@ds/platform';
import { DecisionEntity } from '../entities';
import { DecisionStore } from '../decisions/decision.store';
import { answeredRow, executionBase, ExecutionRecorder } from '../executions/execution-recorder';
import { responseHead, RunExecutor } from '../runs/run-executor';
import { engineCallNotMade } from './playground-limits';
import { PlaygroundReservations } from './playground-reservations.store';

/** Executions of the draft carry version 0: the draft has no version number of its own. */
export const DRAFT_VERSION = 0;

/**
 * Runs from the application's playground: the draft (validated as it is saved) or any deployed version, against
 * a state the author typed. Never billed, `livemode: false`, recorded with `source: "playground"`. Destinations
 * that would call out are answered as previews: what would be sent, nothing sent.
 */
@Injectable()
export class PlaygroundService {
  constructor(
    private readonly decisions: DecisionStore,
    private readonly executor: RunExecutor,
    private readonly recorder: ExecutionRecorder,
    private readonly reservations: PlaygroundReservations,
  ) {}

  async run(request: PlaygroundRunRequest): Promise<Record<string, unknown>> {
    const decision = await this.decisions.require(request);
    const { version, schema } = await this.schemaFor(decision, request.version);
    // Before the lab's limits are spent: a state the version refuses costs the author nothing.
    const stateCheck = validateState(schema, request.state);
    if (!stateCheck.ok) throw new ServiceError('INVALID_STATE', stateCheck.message);
    const executionId = newId('exec');
    await this.reservations.reserve(request.workspaceId, executionId);
    const base = executionBase(executionId, request.workspaceId, decision, version, 'playground', currentRequestId()!, false);
    const executed = await this.executor.execute('playground', base, schema, request.state);
    if (executed.status === 'failed') {
      if (engineCallNotMade(executed.error)) await this.reservations.release(executionId);
      await this.recorder.record(executed.row);
      throw executed.error;
    }
    const { evaluation, metrics } = executed;
    const destinations =
      schema.destinations.length === 0
        ? null
        : previews(schema, matchingDestinations(schema, evaluation, { state: request.state, decisionId: decision.id, executionId }));
    await this.recorder.record(answeredRow(base, schema, evaluation, metrics, destinations && destinations.map(recordedPreview)));
    const body = responseHead(decision, version === DRAFT_VERSION ? null : version, executionId, evaluation, true);
    if (destinations !== null) body.destinations = destinations;
    body.metrics = metrics;
    return body;
  }

  private async schemaFor(decision: DecisionEntity, version: unknown): Promise<{ version: number; schema: NormalizedSchema }> {
    if (version === null || version === undefined) {
      const checked = validateSchema(decision.draftSchema);
      if (!checked.valid) throw new ServiceError('INVALID_SCHEMA', 'The draft is not valid.', checked.issues);
      return { version: DRAFT_VERSION, schema: checked.schema };
    }
    const parsed = parseVersionNumber(version, 'version');
    if (!parsed.ok) throw new ServiceError('INVALID_REQUEST', 'version must be a version number, or null for the draft.', [parsed.issue]);
    const row = await this.decisions.version(decision.id, parsed.value);
    if (!row) throw new ServiceError('NOT_FOUND', `The decision has no version ${parsed.value}.`);
    return { version: parsed.value, schema: row.schema as NormalizedSchema };
  }
}

/**
 * A preview as the execution log keeps it: the params only. The member at the playground sees the whole request,
 * but the log is read by every API key and MCP client of the workspace, which never see destination
 * configuration (a URL, a header carrying a receiver's token, a prompt template).
 */
export function recordedPreview(entry: DestinationEntry): DestinationEntry {
  if (entry.status !== 'preview') return entry;
  const request = entry.request as { params?: unknown } | undefined;
  return { ...entry, request: { params: request?.params ?? {} } };
}

/** Replies and functions are answered as in a run; a destination that would call out shows what it would send. */
function previews(schema: NormalizedSchema, matches: ReturnType<typeof matchingDestinations>): DestinationEntry[] {
  // Nothing is sent from the playground, so the run data a real call would carry is never built.
  const plan = planDestinations(matches, { state: null, livemode: false, response: () => ({}) });
  const callsOut = new Set([...plan.waiting.map((call) => call.index), ...plan.deliveries.map((delivery) => delivery.index)]);
  return plan.entries.map((entry, index) => {
    if (!callsOut.has(index)) return entry;
    const match = matches[index]!;
    const { when: _when, ...target } = match.destination as unknown as Record<string, unknown>;
    return { key: entry.key, type: entry.type, status: 'preview', request: { ...target, params: match.params } };
  });
}

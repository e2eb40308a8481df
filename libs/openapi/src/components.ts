// The shapes of the public API as JSON Schemas, built from the constants the services check with (slug and
// caller-token patterns, limits, word lists, error codes), so a limit changed in code changes here too.
import {
  API_KEY_MODES,
  ERROR_ISSUE_MESSAGE_MAX_CHARS,
  ERROR_ISSUE_PATH_MAX_CHARS,
  ERROR_ISSUES_MAX,
  ERROR_MESSAGE_MAX_CHARS,
  EMBED_PERMISSIONS,
  ERROR_STATUS,
  EXECUTION_SOURCES,
  EXECUTION_STATUSES,
  EXECUTIONS_CURSOR_MAX_LENGTH,
  EXTERNAL_ID_PATTERN,
  PLAN_NAMES,
} from '@ds/contracts';
import { ACTIONS, DESTINATION_TYPES, ENGINES, limits, LIST_ITEM_TYPES, QUESTION_KINDS, SLUG_PATTERN, STATE_FIELD_TYPES } from '@ds/decision-schema';
import { CALLER_TOKEN_PATTERN } from '@ds/ids';
import type { JsonSchema } from './json-schema';
import { requestBodyComponents } from './request-bodies';

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

const idOf = (prefix: string, length = 20): JsonSchema => ({ type: 'string', pattern: `^${prefix}_[A-Za-z0-9]{${length}}$` });
const probability: JsonSchema = { type: 'number', minimum: 0, maximum: 1 };
const dateTime: JsonSchema = { type: 'string', format: 'date-time' };
const nonNegativeInteger: JsonSchema = { type: 'integer', minimum: 0 };

export const SLUG_SCHEMA: JsonSchema = { type: 'string', pattern: SLUG_PATTERN.source, maxLength: limits.SLUG_MAX };
/** `Idempotency-Key` and `X-Request-ID`. */
export const CALLER_TOKEN_SCHEMA: JsonSchema = { type: 'string', pattern: CALLER_TOKEN_PATTERN.source, minLength: 1, maxLength: 128 };

/** Rich text in a decision: text, or JSON measured by its serialized length. */
const richText: JsonSchema = { type: ['string', 'object', 'array'] };

function stateSchemaShape(): JsonSchema {
  const field: JsonSchema = {
    type: 'object',
    required: ['type'],
    properties: {
      type: { enum: [...STATE_FIELD_TYPES] },
      description: { type: ['string', 'null'], maxLength: limits.STATE_FIELD_DESCRIPTION_MAX },
      required: { type: 'boolean' },
      enum: { type: ['array', 'null'], items: { type: 'string' }, minItems: 1 },
    },
  };
  return {
    description: 'The state a run sends: an object with declared fields, a text, or a list.',
    oneOf: [
      {
        type: 'object',
        required: ['type', 'fields'],
        properties: {
          type: { const: 'object' },
          fields: { type: 'object', maxProperties: limits.STATE_FIELDS_MAX, propertyNames: keyPattern(), additionalProperties: field },
        },
      },
      { type: 'object', required: ['type'], properties: { type: { const: 'text' } } },
      { type: 'object', required: ['type', 'items'], properties: { type: { const: 'list' }, items: { enum: [...LIST_ITEM_TYPES] } } },
    ],
    discriminator: { propertyName: 'type' },
  };
}

export function keyPattern(): JsonSchema {
  return { type: 'string', pattern: limits.KEY_PATTERN.source, maxLength: limits.KEY_MAX };
}

function actionReason(): JsonSchema {
  const variant = (type: string, extra: Record<string, JsonSchema>): JsonSchema => ({
    type: 'object',
    required: ['type', ...Object.keys(extra)],
    properties: { type: { const: type }, ...extra },
  });
  return {
    description: 'Why the action was chosen.',
    oneOf: [
      variant('policy', { rule: { type: 'integer', minimum: 0, description: '0-based number of the matching policy rule' } }),
      variant('other_option', { question: { type: 'string' } }),
      variant('low_confidence', { question: { type: 'string' }, confidence: probability, minConfidence: probability }),
      variant('engine_error', { code: { type: 'string', description: 'the engine error the fallback replaced' } }),
      variant('default', {}),
    ],
    discriminator: { propertyName: 'type' },
  };
}

function destinationEntry(): JsonSchema {
  return {
    type: 'object',
    description: 'One destination that fired. Fixed replies and functions that fired have no status.',
    required: ['key', 'type'],
    properties: {
      key: { type: 'string' },
      type: { enum: [...DESTINATION_TYPES] },
      status: { enum: ['completed', 'failed', 'queued', 'skipped', 'preview'] },
      text: { type: 'string', description: 'reply: the message; llm: the model answer' },
      buttons: { type: 'array', items: { type: 'string', maxLength: limits.REPLY_BUTTON_MAX }, maxItems: limits.REPLY_BUTTONS_MAX },
      model: { type: 'string' },
      usage: {
        type: 'object',
        required: ['input_tokens', 'output_tokens'],
        properties: { input_tokens: nonNegativeInteger, output_tokens: nonNegativeInteger },
      },
      reply: { type: ['string', 'null'] },
      response: { description: "agent in sync mode: the agent's whole answer; null when larger than 16,000 characters" },
      error: { type: 'string' },
      delivery_id: idOf('dlv'),
      function: { type: 'string' },
      params: { type: 'object' },
      reason: { enum: ['missing_param', 'limit', 'unavailable'] },
      param: { type: 'string' },
    },
  };
}

function metrics(): JsonSchema {
  return {
    type: 'object',
    required: ['latency_ms', 'engine', 'model', 'estimated_cost_usd', 'input_tokens', 'output_tokens'],
    properties: {
      latency_ms: { ...nonNegativeInteger, description: 'time inside the service, excluding destinations that run after' },
      engine: { enum: [...ENGINES] },
      model: { type: 'string', description: 'exact model version that answered (the checkpoint name for the checkpoint engine)' },
      estimated_cost_usd: { type: 'number', minimum: 0 },
      input_tokens: { ...nonNegativeInteger, description: 'the billed quantity' },
      output_tokens: { ...nonNegativeInteger, description: 'informational, not billed' },
    },
  };
}

/** The parts of a run response that a decision's own keys shape; narrowed per decision in decision-document.ts. */
export interface AnswerShapes {
  state: JsonSchema;
  result: JsonSchema;
  confidence: JsonSchema;
  scores: JsonSchema;
  composites: JsonSchema;
  probabilities: JsonSchema;
}

export const GENERIC_ANSWERS: AnswerShapes = {
  state: {
    description: `Object (up to ${limits.STATE_FIELDS_MAX} declared fields; undeclared fields are forwarded), non-empty string, or non-empty array (${limits.LIST_ITEMS_MIN} to ${limits.LIST_ITEMS_MAX} items), as the decision's state schema says.`,
    anyOf: [{ type: 'object' }, { type: 'string', minLength: 1 }, { type: 'array', minItems: limits.LIST_ITEMS_MIN, maxItems: limits.LIST_ITEMS_MAX }],
  },
  result: {
    type: 'object',
    description:
      'Keyed by question key, in question order: choice, the option value; score, the most likely level label; probability, p(yes). Empty after an engine-error fallback.',
    additionalProperties: { type: ['string', 'number'] },
  },
  confidence: { type: 'object', description: 'Keyed by question key.', additionalProperties: probability },
  scores: { type: 'object', description: 'Score questions only: the weighted level, counted from 1.', additionalProperties: { type: 'number', minimum: 1 } },
  composites: { type: 'object', description: 'Keyed by composite key.', additionalProperties: { type: 'number', minimum: -1, maximum: 1 } },
  probabilities: {
    type: 'object',
    description: 'Keyed by question key: the distribution over the question outcomes.',
    additionalProperties: { type: 'object', additionalProperties: probability },
  },
};

/** The run response; `answers` narrows the keyed parts for one decision. */
export function runResponse(answers: AnswerShapes): JsonSchema {
  return {
    type: 'object',
    required: ['decision_id', 'execution_id', 'schema', 'version', 'result', 'confidence', 'action', 'action_reason', 'metrics'],
    properties: {
      decision_id: idOf('dec'),
      execution_id: idOf('exec'),
      schema: { ...SLUG_SCHEMA, description: "the decision's slug" },
      version: { type: 'integer', minimum: 1, description: 'the deployed version that answered' },
      result: answers.result,
      confidence: answers.confidence,
      scores: { ...answers.scores, description: `${answers.scores.description ?? ''} Present only when the decision has score questions.`.trim() },
      composites: { ...answers.composites, description: `${answers.composites.description ?? ''} Present only when the decision has composites.`.trim() },
      action: ref('Action'),
      action_reason: ref('ActionReason'),
      probabilities: { ...answers.probabilities, description: `${answers.probabilities.description ?? ''} Present only with ?include=probabilities.`.trim() },
      destinations: { type: 'array', items: ref('DestinationEntry'), description: 'Present only when the decision has destinations; [] when none fired.' },
      metrics: ref('RunMetrics'),
    },
  };
}

export function runRequest(state: JsonSchema): JsonSchema {
  return { type: 'object', required: ['state'], properties: { state }, description: 'Other top-level fields are ignored.' };
}

/** What turned out to be right, keyed by question key of the execution's version. */
const outcomeAnswers: JsonSchema = {
  type: 'object',
  description:
    'Keyed by question key of the execution\'s version. choice: an option value (`other` allowed); score: a level label; probability: true when the "yes" happened.',
  additionalProperties: { type: ['string', 'boolean'] },
};

function execution(): JsonSchema {
  const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });
  return {
    type: 'object',
    description: 'A recorded run; never its input. An execution with status error has null answers, action and metrics, and an error.',
    required: [
      'id',
      'decision_id',
      'decision',
      'version',
      'status',
      'source',
      'request_id',
      'livemode',
      'result',
      'confidence',
      'action',
      'action_reason',
      'destinations',
      'metrics',
      'outcome',
      'created_at',
    ],
    properties: {
      id: idOf('exec'),
      decision_id: idOf('dec'),
      decision: { ...SLUG_SCHEMA, description: "the decision's slug" },
      version: { type: 'integer', minimum: 1 },
      status: { enum: [...EXECUTION_STATUSES] },
      source: { enum: [...EXECUTION_SOURCES], description: '`webhook` for runs started by the secret URL' },
      request_id: CALLER_TOKEN_SCHEMA,
      livemode: { type: 'boolean' },
      result: nullable(GENERIC_ANSWERS.result),
      confidence: nullable(GENERIC_ANSWERS.confidence),
      scores: GENERIC_ANSWERS.scores,
      composites: GENERIC_ANSWERS.composites,
      action: nullable(ref('Action')),
      action_reason: nullable(ref('ActionReason')),
      destinations: nullable({ type: 'array', items: ref('DestinationEntry') }),
      metrics: nullable(ref('RunMetrics')),
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: ref('ErrorCode'),
          message: { type: 'string' },
          details: {
            type: 'array',
            description: 'what the failure concerned, where known: for `INVALID_STATE`, the field the message names',
            items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } },
          },
        },
      },
      trace: { ...nullable(ref('ExecutionTrace')), description: 'only with `include=trace`; null for failed runs' },
      outcome: nullable({ ...ref('Outcome'), description: 'what turned out to be right, as last reported; null until then' }),
      created_at: dateTime,
    },
  };
}

function executionTrace(): JsonSchema {
  const operand: JsonSchema = { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] };
  return {
    type: 'object',
    description: "How the action was reached; never the run's input. Without `storeOutput` the run's own values (`left`, composite values) are null.",
    required: ['composites', 'rules', 'decided_by', 'action'],
    properties: {
      composites: {
        type: 'array',
        items: {
          type: 'object',
          required: ['key', 'value'],
          properties: { key: { type: 'string' }, value: { anyOf: [{ type: 'number' }, { type: 'null' }] } },
        },
      },
      rules: {
        type: 'array',
        description: 'Every policy rule in order, each evaluated, with whether all its conditions held.',
        items: {
          type: 'object',
          required: ['rule', 'action', 'matched', 'conditions'],
          properties: {
            rule: { type: 'integer', minimum: 0 },
            action: ref('Action'),
            matched: { type: 'boolean' },
            conditions: {
              type: 'array',
              items: {
                type: 'object',
                required: ['on', 'key', 'left', 'op', 'right', 'holds'],
                properties: {
                  on: { enum: ['answer', 'confidence', 'score', 'composite'] },
                  key: { type: 'string', description: 'the question or composite read' },
                  left: operand,
                  op: { enum: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte'] },
                  right: operand,
                  holds: { type: 'boolean' },
                },
              },
            },
          },
        },
      },
      decided_by: ref('ActionReason'),
      action: ref('Action'),
    },
  };
}

function contract(): JsonSchema {
  const level: JsonSchema = { type: 'object', required: ['label'], properties: { label: { type: 'string' }, description: richText, rubric: {} } };
  return {
    type: 'object',
    description: "The active version's contract: never the full schema (no policies, composites, settings or destinations).",
    required: ['slug', 'status', 'version', 'state_schema', 'example_state', 'questions', 'actions', 'fallback_action'],
    properties: {
      slug: SLUG_SCHEMA,
      status: { type: 'string', description: '`deployed` for a decision with an active version' },
      version: { type: 'integer', minimum: 1 },
      state_schema: ref('StateSchema'),
      example_state: { description: 'a state the active version accepts' },
      questions: {
        type: 'array',
        minItems: limits.QUESTIONS_MIN,
        maxItems: limits.QUESTIONS_MAX,
        items: {
          type: 'object',
          required: ['key', 'kind', 'instructions'],
          properties: {
            key: keyPattern(),
            kind: { enum: [...QUESTION_KINDS] },
            instructions: richText,
            options: {
              type: 'array',
              items: {
                type: 'object',
                required: ['value', 'description'],
                properties: { value: { type: 'string' }, description: { anyOf: [richText, { type: 'null' }] } },
              },
            },
            levels: { type: 'array', items: level },
            criterion: richText,
          },
        },
      },
      actions: { type: 'array', items: ref('Action') },
      fallback_action: ref('Action'),
    },
  };
}

function account(): JsonSchema {
  const cents: JsonSchema = { type: 'integer' };
  const currency: JsonSchema = { enum: ['usd', 'brl'] };
  return {
    type: 'object',
    required: ['workspace', 'api_key', 'plan', 'usage'],
    properties: {
      workspace: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } },
      api_key: { type: 'object', required: ['id'], properties: { id: idOf('key'), mode: { enum: [...API_KEY_MODES] } } },
      plan: {
        type: 'object',
        required: ['name', 'rate_limit_per_minute', 'hard_cap'],
        properties: {
          name: { enum: [...PLAN_NAMES] },
          rate_limit_per_minute: { type: 'integer', minimum: 1 },
          hard_cap: { type: 'boolean', description: 'false for the free plan' },
          included_decisions: nonNegativeInteger,
          max_decisions: { type: ['integer', 'null'] },
          price_per_million_cents: { type: ['integer', 'null'] },
          retention_days: { type: 'integer', minimum: 1 },
        },
      },
      usage: {
        type: 'object',
        properties: { period_start: dateTime, period_end: dateTime, used: nonNegativeInteger, included: nonNegativeInteger, reserved: nonNegativeInteger },
      },
      balance: {
        type: 'object',
        properties: {
          currency,
          available_cents: cents,
          promotional_cents: cents,
          paid_cents: cents,
          credits: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                id: { type: 'string' },
                kind: { enum: ['promotional', 'paid'] },
                remaining_cents: cents,
                currency,
                expires_at: { anyOf: [dateTime, { type: 'null' }] },
              },
            },
          },
        },
      },
      spend_cap: { type: 'object', properties: { spend_cap_cents: { type: ['integer', 'null'] }, spent_cents: cents, currency } },
    },
  };
}

/** A sub-workspace; in an embed session's answer it also says whether the session `created` it. */
function subWorkspace(inEmbedSession = false): JsonSchema {
  const limitValue: JsonSchema = { type: ['integer', 'null'], minimum: 0, description: "null means the partner's default" };
  return {
    type: 'object',
    required: ['id', 'external_id', 'name', 'metadata', 'limits', 'usage', 'created_at', ...(inEmbedSession ? ['created'] : [])],
    properties: {
      ...(inEmbedSession ? { created: { type: 'boolean', description: 'whether this session created the sub-workspace' } } : {}),
      id: { type: 'string', description: 'UUID form' },
      external_id: { type: 'string', pattern: EXTERNAL_ID_PATTERN.source },
      name: { type: 'string', minLength: 1, maxLength: 80 },
      metadata: ref('Metadata'),
      limits: { type: 'object', properties: { max_decisions: limitValue, monthly_decisions: limitValue } },
      usage: { type: 'object', properties: { decisions: nonNegativeInteger, period_used: nonNegativeInteger, period_start: dateTime, period_end: dateTime } },
      created_at: dateTime,
      seed: {
        type: 'object',
        description: 'On creation only.',
        properties: {
          created: { type: 'array', items: { type: 'object', properties: { slug: SLUG_SCHEMA, id: idOf('dec'), deployed: { type: 'boolean' } } } },
          skipped: { type: 'array' },
        },
      },
    },
  };
}

function embedSession(): JsonSchema {
  return {
    type: 'object',
    required: ['id', 'url', 'launch_expires_at', 'expires_at', 'permissions', 'origins', 'workspace'],
    properties: {
      id: { type: 'string', pattern: '^emb_' },
      url: { type: 'string', description: 'one-time launch URL; load it in an iframe within 60 seconds' },
      launch_expires_at: dateTime,
      expires_at: dateTime,
      permissions: { type: 'array', items: { enum: [...EMBED_PERMISSIONS] } },
      origins: { type: 'array', items: { type: 'string' } },
      workspace: subWorkspace(true),
    },
  };
}

function jsonRpc(): Record<string, JsonSchema> {
  const id: JsonSchema = { type: ['string', 'integer'] };
  return {
    JsonRpcRequest: {
      type: 'object',
      description: 'One JSON-RPC 2.0 message (no batches). Methods: `tools/list`, `tools/call` with `params.name` and `params.arguments`.',
      required: ['jsonrpc', 'method'],
      properties: { jsonrpc: { const: '2.0' }, id, method: { type: 'string' }, params: { type: 'object' } },
    },
    JsonRpcResponse: {
      type: 'object',
      required: ['jsonrpc'],
      properties: {
        jsonrpc: { const: '2.0' },
        id: { type: ['string', 'integer', 'null'] },
        result: {
          type: 'object',
          description:
            'For tools/call: `content[0].text` holds the tool JSON, `structuredContent` the same JSON; `isError: true` with `{ error }` for tool errors.',
        },
        error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} } },
      },
    },
  };
}

/** Every entry of `components.schemas`. */
export function componentSchemas(): Record<string, JsonSchema> {
  return {
    ErrorCode: { enum: Object.keys(ERROR_STATUS), description: 'Stable machine-readable code; clients switch on it.' },
    Error: {
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'message', 'request_id'],
          properties: {
            code: ref('ErrorCode'),
            message: { type: 'string', maxLength: ERROR_MESSAGE_MAX_CHARS, description: 'human-readable; may change, never parsed' },
            request_id: { ...CALLER_TOKEN_SCHEMA, description: 'equal to the X-Request-ID header' },
            details: {
              description:
                `Array of \`{ path, message }\` for validation problems, at most ${ERROR_ISSUES_MAX} (when there were more, the message says how many), ` +
                'or an object (402 details, `reason` of a 403, `currentRevision`). Texts past their bound end in `…`.',
              anyOf: [
                {
                  type: 'array',
                  maxItems: ERROR_ISSUES_MAX,
                  items: {
                    type: 'object',
                    required: ['path', 'message'],
                    properties: {
                      path: { type: 'string', maxLength: ERROR_ISSUE_PATH_MAX_CHARS },
                      message: { type: 'string', maxLength: ERROR_ISSUE_MESSAGE_MAX_CHARS },
                    },
                  },
                },
                { type: 'object' },
              ],
            },
          },
        },
      },
    },
    Action: { enum: [...ACTIONS] },
    ActionReason: actionReason(),
    DestinationEntry: destinationEntry(),
    RunMetrics: metrics(),
    RunRequest: runRequest(GENERIC_ANSWERS.state),
    RunResponse: runResponse(GENERIC_ANSWERS),
    StateSchema: stateSchemaShape(),
    DecisionSummary: {
      type: 'object',
      required: ['slug', 'name', 'status', 'active_version'],
      properties: {
        id: idOf('dec'),
        slug: SLUG_SCHEMA,
        name: { type: 'string', minLength: 1, maxLength: limits.DECISION_NAME_MAX },
        status: { enum: ['draft', 'deployed'] },
        active_version: { type: ['integer', 'null'], minimum: 1 },
        endpoint_enabled: { type: 'boolean' },
      },
    },
    DecisionList: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: ref('DecisionSummary') } } },
    DecisionContract: contract(),
    Account: account(),
    Execution: execution(),
    ExecutionTrace: executionTrace(),
    OutcomeRequest: {
      type: 'object',
      description: 'At least one of `answers` and `action`. Other fields are ignored.',
      properties: { answers: outcomeAnswers, action: ref('Action') },
    },
    Outcome: {
      type: 'object',
      required: ['answers', 'action', 'recorded_at'],
      properties: { answers: outcomeAnswers, action: { anyOf: [ref('Action'), { type: 'null' }] }, recorded_at: dateTime },
    },
    RecordedOutcome: {
      type: 'object',
      required: ['execution_id', 'answers', 'action', 'recorded_at'],
      properties: { execution_id: idOf('exec'), answers: outcomeAnswers, action: { anyOf: [ref('Action'), { type: 'null' }] }, recorded_at: dateTime },
    },
    ExecutionList: {
      type: 'object',
      required: ['data', 'has_more', 'next_cursor'],
      properties: {
        data: { type: 'array', items: ref('Execution') },
        has_more: { type: 'boolean' },
        next_cursor: { type: ['string', 'null'], maxLength: EXECUTIONS_CURSOR_MAX_LENGTH, description: 'pass as `cursor` for the next page' },
        total_count: { type: 'integer', minimum: 0, description: 'with `include=total_count`: the executions matching the filters, at most the cap' },
        total_capped: { type: 'boolean', description: 'with `include=total_count`: more executions match than `total_count`' },
      },
    },
    HookBody: {
      description: 'A JSON object whose only key is `state` is unwrapped; anything else (an object with other keys, an array, a string) is the state itself.',
      anyOf: [{ type: 'object' }, { type: 'array' }, { type: 'string' }, { type: 'number' }, { type: 'boolean' }],
    },
    Health: { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } },
    OpenApiDocument: {
      type: 'object',
      description: 'An OpenAPI 3.1 document; its own schema is the OpenAPI specification.',
      required: ['openapi', 'info', 'paths'],
      properties: { openapi: { type: 'string', pattern: '^3\\.1\\.' }, info: { type: 'object' }, paths: { type: 'object' } },
      additionalProperties: true,
    },
    SubWorkspace: subWorkspace(),
    SubWorkspaceList: {
      type: 'object',
      required: ['data', 'next_cursor'],
      properties: { data: { type: 'array', items: ref('SubWorkspace') }, next_cursor: { type: ['string', 'null'] } },
    },
    EmbedSession: embedSession(),
    EmbedRevokeResponse: { type: 'object', required: ['revoked'], properties: { revoked: nonNegativeInteger } },
    DecisionCompletedEvent: {
      type: 'object',
      required: ['id', 'type', 'created', 'livemode', 'data'],
      properties: {
        id: { ...idOf('dlv'), description: 'the delivery id, sent with every attempt; deduplicate on it' },
        type: { const: 'decision.completed' },
        created: { type: 'integer', description: 'Unix seconds when the run answered' },
        livemode: { type: 'boolean', description: 'true for live keys and the secret URL, false for test keys and the Playground' },
        data: ref('RunResponse'),
      },
    },
    ...jsonRpc(),
    ...requestBodyComponents(),
  };
}

import { z } from 'zod';
import {
  boundedIssues,
  ERROR_ISSUES_MAX,
  ListDecisionsReply,
  ListExecutionsReply,
  ListExecutionsRequest,
  ListReviewsRequest,
  parseValue,
  REVIEW_LIST_REASONS,
  REVIEW_LIST_STATUSES,
  REVIEW_NOTE_MAX,
  ReviewListReply,
  ReviewResolvedReply,
  REVIEWS_PAGE,
  ServiceError,
} from '@ds/contracts';
import {
  checkStateAlone,
  DecisionContract,
  isValidSlug,
  parseVersionNumber,
  TEMPLATES,
  templateSummary,
  validateSchema,
  VERSION_NUMBER_MAX,
} from '@ds/decision-schema';

/**
 * The eleven tools of the agent tool server: their published input schemas, annotations and what each does.
 * A tool only maps its arguments onto the calls the REST routes make (ToolBackend); every rule of the API
 * (windows, billing, the runner's checks) stays where the REST routes have it.
 */

/** What the tools may ask of the service, always on behalf of one API key's workspace. */
export interface ToolBackend {
  /** The body of GET /v1/me. */
  account(): Promise<Record<string, unknown>>;
  listDecisions(): Promise<ListDecisionsReply>;
  /** The contract of the decision's active version, as GET /v1/decisions/{slug} answers it. */
  contract(slug: string): Promise<DecisionContract>;
  /** Counts one run in the workspace's decisions window; RATE_LIMITED when the window is used up. */
  countRun(): Promise<void>;
  /** Runs the decision as the run endpoint does (billed, `source: "mcp"`); answers the runner's response text. */
  run(slug: string, state: unknown, includeProbabilities: boolean, version: number | null): Promise<string>;
  listExecutions(query: Omit<ListExecutionsRequest, 'workspaceId'>): Promise<ListExecutionsReply>;
  /** As GET /app/v1/workspaces/{ws}/reviews answers it. */
  listReviews(query: Omit<ListReviewsRequest, 'workspaceId'>): Promise<ReviewListReply>;
  /** As POST …/reviews/{id}/resolve does it, the API key as the reviewer. */
  resolveReview(reviewId: string, body: Record<string, unknown>): Promise<ReviewResolvedReply>;
}

/** A tool's answer: its JSON, and the text of it when a service already serialised it (a run response). */
export interface ToolOutput {
  json: Record<string, unknown>;
  text?: string;
}

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint: boolean;
}

export interface Tool {
  name: string;
  title: string;
  description: string;
  input: z.ZodType<Record<string, unknown>>;
  annotations: ToolAnnotations;
  /** Counted in the decisions window before its arguments are read, as the run endpoint counts before its body. */
  countsAsRun: boolean;
  call(args: Record<string, unknown>, backend: ToolBackend): Promise<ToolOutput>;
}

function defineTool<S extends z.ZodType<Record<string, unknown>>>(tool: {
  name: string;
  title: string;
  description: string;
  input: S;
  readOnly: boolean;
  /** Counted in the decisions window; every tool that changes something is a run but resolve_review. */
  countsAsRun?: boolean;
  call(args: z.output<S>, backend: ToolBackend): Promise<ToolOutput>;
}): Tool {
  const annotations: ToolAnnotations = tool.readOnly
    ? { title: tool.title, readOnlyHint: true, openWorldHint: false }
    : // A run creates an execution, is billed and may call out to the decision's destinations; running twice runs twice.
      // A resolution records an outcome and fires the decision.reviewed webhooks; the second is refused.
      { title: tool.title, readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    input: tool.input,
    annotations,
    countsAsRun: tool.countsAsRun ?? !tool.readOnly,
    call: (args, backend) => tool.call(args as z.output<S>, backend),
  };
}

// ---- argument types: one message per problem, in the words the REST API uses -------------------------------

const presence = (problem: string) => (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : problem);

const slug = z.string({ error: presence('must be a string') }).describe("The decision's slug, as listed by list_decisions.");

const state = z
  .union([z.record(z.string(), z.unknown()), z.string(), z.array(z.unknown())], { error: presence('must be an object, a string or an array') })
  .describe("The state, as the decision's state_schema describes it (get_decision): an object, a text or a list.");

const LIMIT_MESSAGE = 'must be an integer from 1 to 100';

/** A version number read by the one parser every route's bodies use; published as the integer it must be. */
const versionNumber = z
  .unknown()
  .transform((value, ctx) => {
    const parsed = parseVersionNumber(value, 'version');
    if (parsed.ok) return parsed.value;
    ctx.addIssue({ code: 'custom', message: parsed.issue.message, input: value });
    return z.NEVER;
  })
  .meta({ type: 'integer', minimum: 1, maximum: VERSION_NUMBER_MAX });

const tools: Tool[] = [
  defineTool({
    name: 'get_account',
    title: 'Account',
    description: "The API key's workspace, the key, the plan (with its rate_limit_per_minute) and this period's usage.",
    input: z.strictObject({}),
    readOnly: true,
    call: async (_args, backend) => ({ json: await backend.account() }),
  }),
  defineTool({
    name: 'list_decisions',
    title: 'List decisions',
    description: "The workspace's decisions: slug, name, status, active version and whether the endpoint is enabled.",
    input: z.strictObject({}),
    readOnly: true,
    call: async (_args, backend) => ({ json: { ...(await backend.listDecisions()) } }),
  }),
  defineTool({
    name: 'get_decision',
    title: 'Decision contract',
    description:
      "The contract of a decision's active version: state_schema, an example_state it accepts, the questions with their options, levels or criteria, the actions and the fallback action.",
    input: z.strictObject({ slug }),
    readOnly: true,
    call: async (args, backend) => ({ json: { ...(await backend.contract(knownSlug(args.slug))) } }),
  }),
  defineTool({
    name: 'check_state',
    title: 'Check a state',
    description:
      "Whether a state fits the decision's active version (its state schema and the state's own size limit), without running anything. " +
      'Answers { valid: true } or { valid: false, message }. A run can still answer INVALID_STATE when the state plus the longest question exceed the token budget.',
    input: z.strictObject({ slug, state }),
    readOnly: true,
    call: async (args, backend) => {
      const contract = await backend.contract(knownSlug(args.slug));
      const check = checkStateAlone({ state: contract.state_schema }, args.state);
      return { json: check.ok ? { valid: true } : { valid: false, message: check.message } };
    },
  }),
  defineTool({
    name: 'run_decision',
    title: 'Run a decision',
    description:
      "Runs the decision's active version on a state and answers the run response: result, confidence, action, action_reason, destinations and metrics. " +
      'Billed like an API call, without idempotency: every call that reaches the engine runs and is billed.',
    input: z.strictObject({
      slug,
      state,
      include_probabilities: z
        .boolean({ error: 'must be true or false' })
        .optional()
        .describe('true adds the distribution of every question under probabilities.'),
      version: versionNumber
        .optional()
        .describe('Runs this deployed version instead of the active one, for reproducible answers; the answer says which version ran.'),
    }),
    readOnly: false,
    call: async (args, backend) => {
      const text = await backend.run(knownSlug(args.slug), args.state, args.include_probabilities === true, args.version ?? null);
      return { json: JSON.parse(text) as Record<string, unknown>, text };
    },
  }),
  defineTool({
    name: 'list_executions',
    title: 'List executions',
    description: 'Recent executions, newest first, with answers, action, reason, metrics and destinations; never their inputs. Page with next_cursor.',
    input: z.strictObject({
      decision: z.string({ error: 'must be a decision slug' }).optional().describe('Only executions of this decision (its slug).'),
      status: z.enum(['success', 'error'], { error: 'must be success or error' }).optional().describe('Only executions with this status.'),
      limit: z
        .int({ error: LIMIT_MESSAGE })
        .min(1, { error: LIMIT_MESSAGE })
        .max(100, { error: LIMIT_MESSAGE })
        .default(20)
        .describe('Executions per page, 1 to 100.'),
      cursor: z
        .string({ error: 'is not a valid cursor' })
        .min(1, { error: 'is not a valid cursor' })
        .max(200, { error: 'is not a valid cursor' })
        .optional()
        .describe('next_cursor of the previous page.'),
    }),
    readOnly: true,
    call: async (args, backend) => ({
      json: {
        ...(await backend.listExecutions({ limit: args.limit, cursor: args.cursor ?? null, decision: args.decision ?? null, status: args.status ?? null })),
      },
    }),
  }),
  defineTool({
    name: 'list_reviews',
    title: 'List reviews',
    description:
      'Review items of runs sent to human review, oldest due first: status, reason, the machine’s action, due time and claim. ' +
      'Without status, the items not yet resolved. Page with next_cursor.',
    input: z.strictObject({
      status: z
        .enum(REVIEW_LIST_STATUSES, { error: `must be one of ${REVIEW_LIST_STATUSES.join(', ')}` })
        .optional()
        .describe('Only items in this status.'),
      decision_id: z
        .string({ error: 'must be a decision id (dec_…)' })
        .regex(/^dec_[A-Za-z0-9]{1,64}$/, { error: 'must be a decision id (dec_…)' })
        .optional()
        .describe('Only items of this decision (its id).'),
      reason: z
        .enum(REVIEW_LIST_REASONS, { error: `must be one of ${REVIEW_LIST_REASONS.join(', ')}` })
        .optional()
        .describe('Only items sent to review for this reason.'),
      limit: z
        .int({ error: LIMIT_MESSAGE })
        .min(REVIEWS_PAGE.min, { error: LIMIT_MESSAGE })
        .max(REVIEWS_PAGE.max, { error: LIMIT_MESSAGE })
        .default(REVIEWS_PAGE.default)
        .describe('Items per page, 1 to 100.'),
      cursor: z
        .string({ error: 'is not a valid cursor' })
        .min(1, { error: 'is not a valid cursor' })
        .max(200, { error: 'is not a valid cursor' })
        .optional()
        .describe('next_cursor of the previous page.'),
    }),
    readOnly: true,
    call: async (args, backend) => ({
      json: {
        ...(await backend.listReviews({
          limit: args.limit,
          cursor: args.cursor ?? null,
          status: args.status ?? null,
          decisionId: args.decision_id ?? null,
          reason: args.reason ?? null,
        })),
      },
    }),
  }),
  defineTool({
    name: 'resolve_review',
    title: 'Resolve a review',
    description:
      'Resolves a review item: answers (question key → option value, level label, or true/false for a probability) and/or action, as an outcome takes them, ' +
      'recorded as the execution’s outcome; fires the decision.reviewed webhooks. Refused (CONFLICT) when resolved already or claimed by someone else.',
    input: z.strictObject({
      id: z.string({ error: presence('must be a string') }).describe('The review item id (rev_…), as listed by list_reviews.'),
      answers: z
        .record(z.string(), z.unknown(), { error: 'must be an object keyed by question key' })
        .optional()
        .describe('The right answer per question key.'),
      action: z.string({ error: 'must be a string' }).optional().describe('The right action: continue, block, escalate or fallback.'),
      note: z
        .string({ error: `must be text of at most ${REVIEW_NOTE_MAX} characters` })
        .max(REVIEW_NOTE_MAX, { error: `must be text of at most ${REVIEW_NOTE_MAX} characters` })
        .optional()
        .describe('Why, in the reviewer’s words.'),
    }),
    readOnly: false,
    countsAsRun: false,
    call: async (args, backend) => {
      const { id, ...body } = args;
      return { json: { ...(await backend.resolveReview(id, body)) } };
    },
  }),
  defineTool({
    name: 'list_templates',
    title: 'List templates',
    description: 'The built-in decision templates: id, name, description, category and the decision patterns each shows.',
    input: z.strictObject({}),
    readOnly: true,
    call: async () => ({ json: { data: TEMPLATES.map(templateSummary) } }),
  }),
  defineTool({
    name: 'get_template',
    title: 'Template',
    description: 'One built-in template: its summary plus a complete decision schema and a sample_state that schema accepts.',
    input: z.strictObject({ id: z.string({ error: presence('must be a string') }).describe('The template id, as listed by list_templates.') }),
    readOnly: true,
    call: async (args) => {
      const template = TEMPLATES.find((candidate) => candidate.id === args.id);
      if (!template) throw new ServiceError('NOT_FOUND', `No template ${args.id}.`);
      return { json: { ...templateSummary(template), schema: template.schema, sample_state: template.sample_state } };
    },
  }),
  defineTool({
    name: 'validate_schema',
    title: 'Validate a decision schema',
    description:
      'Checks a decision schema without saving it. Answers { valid: true, schema } with the normalized schema (other added, defaults filled in), ' +
      `or { valid: false, issues: [{ path, message }] } with the first ${ERROR_ISSUES_MAX} issues found and, when there were more, ` +
      'issues_not_listed: how many more.',
    input: z.strictObject({ schema: z.record(z.string(), z.unknown(), { error: presence('must be an object') }).describe('A decision schema.') }),
    readOnly: true,
    call: async (args) => {
      const result = validateSchema(args.schema);
      if (result.valid) return { json: { valid: true, schema: result.schema } };
      // Bounded as an error's details are: a schema of thousands of empty questions would otherwise answer megabytes.
      const { listed, notListed } = boundedIssues(result.issues);
      return { json: notListed > 0 ? { valid: false, issues: listed, issues_not_listed: notListed } : { valid: false, issues: listed } };
    },
  }),
];

export const TOOLS: ReadonlyMap<string, Tool> = new Map(tools.map((tool) => [tool.name, tool]));

/** A malformed slug names no decision, as on the REST routes. */
function knownSlug(value: string): string {
  if (!isValidSlug(value)) throw new ServiceError('DECISION_NOT_FOUND', 'No decision with this slug in this workspace.');
  return value;
}

/** The tools as `tools/list` publishes them; the input schemas are generated from the validators the calls use. */
export const TOOL_LIST = tools.map((tool) => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: z.toJSONSchema(tool.input, { io: 'input' }) as { type: 'object'; [key: string]: unknown },
  annotations: tool.annotations,
}));

/** The tool's arguments, or INVALID_REQUEST with every problem in `details` as `{ path, message }`. */
export function toolArguments(tool: Tool, args: unknown): Record<string, unknown> {
  const input = args ?? {};
  const invalid = `The arguments of ${tool.name} are not valid.`;
  if (typeof input !== 'object' || Array.isArray(input))
    throw new ServiceError('INVALID_REQUEST', invalid, [{ path: '', message: 'arguments must be an object' }]);
  return parseValue(tool.input, input, invalid, `is not an argument of ${tool.name}`);
}

// Normalization turns a schema that passed validation into the explicit form that is stored and versioned:
// every optional part present, every default written out, `other` appended to every choice question.
//
// Defaults, and why (where the docs are silent, the choice is ours):
// - settings.engine: null = the workspace default engine (spec: "without it the workspace default applies").
// - settings.model: null = the model configured for the engine.
// - settings.timeoutMs: 5,000 (spec).
// - settings.onEngineError: 'error', the spec's unnamed non-fallback value: engine failures surface as their
//   own error codes unless the author opts into answering with the fallback action.
// - settings.storeInput: false. States often carry personal data, and executions never return inputs anyway;
//   keeping them is an opt-in.
// - settings.storeOutput: true. The execution log exists to show answers, actions and reasons.
// - context, descriptions, minConfidence, threshold, llm input/model, agent instructions, http body: null.
// - state field required: false; enum: null. Policy `and`: []. Destination when: [], params: {}, headers: {}.
// - reply buttons: []; param required: false.
// - llm: maxTokens 512, temperature 0.3, timeoutMs 20,000 (spec).
// - agent: mode 'async' (a hand-off that does not hold the caller and does not count toward the three waiting
//   destinations), tools [], timeoutMs 20,000 (spec, used in sync mode).
// - http: method 'POST' (the body template only makes sense with a method that carries one).
// - settings.review: absent (no review); when given, `when` parts false or empty, auditRate 0, dueMinutes 240.
// - A rubric level without a label gets its 1-based position as its label.
import { isRecord, jsonCopy } from './json';
import { levelLabel } from './outcomes';
import { normalizeReview } from './review';
import { normalizeCalibration } from './quality/validate-calibration';
import {
  OTHER_OPTION,
  type ChoiceOption,
  type DestinationInput,
  type JsonValue,
  type NormalizedDestination,
  type NormalizedQuestion,
  type NormalizedSchema,
  type ParamSpec,
  type ParamSpecInput,
  type Policy,
  type QuestionInput,
  type RichText,
  type SchemaInput,
  type ScoreLevel,
  type ScoreLevelInput,
  type Settings,
  type SettingsInput,
  type StateField,
  type StateFieldInput,
  type StateSchema,
  type StateSchemaInput,
} from './schema-types';

export const DEFAULT_SETTINGS: Readonly<Settings> = {
  engine: null,
  model: null,
  timeoutMs: 5000,
  onEngineError: 'error',
  storeInput: false,
  storeOutput: true,
};

export const DEFAULT_LLM = { maxTokens: 512, temperature: 0.3, timeoutMs: 20000 } as const;
export const DEFAULT_AGENT = { mode: 'async', timeoutMs: 20000 } as const;
export const DEFAULT_HTTP_METHOD = 'POST';

const NORMALIZED_OTHER: Readonly<ChoiceOption> = { value: OTHER_OPTION, description: null };

/** The reserved option as normalization writes it, the only form in which an author's schema may carry it. */
export function isNormalizedOther(option: unknown): boolean {
  return isRecord(option) && option.value === OTHER_OPTION && (option.description ?? null) === null;
}

/** Only for input that validation accepted: its shape is trusted here. */
export function normalizeValidInput(input: SchemaInput): NormalizedSchema {
  const schema: NormalizedSchema = {
    state: normalizeState(input.state),
    context: input.context ?? null,
    questions: input.questions.map(normalizeQuestion),
    composites: (input.composites ?? []).map((composite) => ({
      key: composite.key,
      description: composite.description ?? null,
      terms: composite.terms.map((term) =>
        term.option == null ? { question: term.question, weight: term.weight } : { question: term.question, option: term.option, weight: term.weight },
      ),
    })),
    policies: (input.policies ?? []).map((policy): Policy => ({
      when: { ...policy.when },
      and: (policy.and ?? []).map((c) => ({ ...c })),
      action: policy.action,
    })),
    fallbackAction: input.fallbackAction,
    settings: normalizeSettings(input.settings ?? {}),
    destinations: (input.destinations ?? []).map(normalizeDestination),
  };
  // Present only when a question has a map, so schemas without one read exactly as before.
  const calibration = normalizeCalibration(input.calibration);
  if (calibration) schema.calibration = calibration;
  return schema;
}

function normalizeState(state: StateSchemaInput): StateSchema {
  if (state.type !== 'object') return { ...state };
  return { type: 'object', fields: normalizeFields(state.fields) };
}

function normalizeFields(fields: Record<string, StateFieldInput>): Record<string, StateField> {
  const normalized = Object.entries(fields).map(([name, field]): [string, StateField] => {
    const result: StateField = {
      type: field.type,
      description: field.description ?? null,
      required: field.required ?? false,
      enum: field.enum ? [...field.enum] : null,
    };
    // Absent rather than empty when none are declared, so schemas written before sub-fields normalize as they did.
    if (field.fields) result.fields = normalizeFields(field.fields);
    return [name, result];
  });
  return Object.fromEntries(normalized);
}

function normalizeQuestion(question: QuestionInput): NormalizedQuestion {
  const key = question.key;
  const instructions = jsonCopy(question.instructions);
  const minConfidence = question.minConfidence ?? null;
  switch (question.kind) {
    case 'choice': {
      const authored = question.options.filter((option, i, all) => i < all.length - 1 || !isNormalizedOther(option));
      const options = authored.map((option) => ({ value: option.value, description: jsonCopy(option.description ?? null) }));
      return { key, kind: 'choice', instructions, options: [...options, { ...NORMALIZED_OTHER }], minConfidence };
    }
    case 'score':
      return { key, kind: 'score', instructions, levels: question.levels.map(normalizeLevel), minConfidence };
    case 'probability':
      return { key, kind: 'probability', instructions, criterion: jsonCopy(question.criterion), threshold: question.threshold ?? null, minConfidence };
  }
}

function normalizeLevel(level: ScoreLevelInput, index: number): ScoreLevel {
  if (typeof level === 'string') return level;
  if ('rubric' in level && level.rubric != null) {
    return { label: levelLabel(level, index), rubric: jsonCopy(level.rubric) };
  }
  const labelled = level as { label: string; description?: RichText | null };
  return { label: labelled.label, description: jsonCopy(labelled.description ?? null) };
}

function normalizeSettings(settings: SettingsInput): Settings {
  const normalized: Settings = {
    engine: settings.engine ?? DEFAULT_SETTINGS.engine,
    model: settings.model ?? DEFAULT_SETTINGS.model,
    timeoutMs: settings.timeoutMs ?? DEFAULT_SETTINGS.timeoutMs,
    onEngineError: settings.onEngineError ?? DEFAULT_SETTINGS.onEngineError,
    storeInput: settings.storeInput ?? DEFAULT_SETTINGS.storeInput,
    storeOutput: settings.storeOutput ?? DEFAULT_SETTINGS.storeOutput,
  };
  if (settings.confidenceSource === 'tokens') normalized.confidenceSource = 'tokens';
  if (settings.review != null) normalized.review = normalizeReview(settings.review);
  return normalized;
}

function normalizeParam(param: ParamSpecInput): ParamSpec {
  return 'from' in param && param.from != null
    ? { from: param.from, required: param.required ?? false }
    : { value: jsonCopy((param as { value: JsonValue }).value) };
}

function normalizeDestination(destination: DestinationInput): NormalizedDestination {
  const common = {
    key: destination.key,
    description: destination.description ?? null,
    when: (destination.when ?? []).map((condition) => ({ ...condition })),
    params: Object.fromEntries(Object.entries(destination.params ?? {}).map(([name, param]) => [name, normalizeParam(param)])),
    headers: { ...destination.headers },
  };
  switch (destination.type) {
    case 'reply':
      return { ...common, type: 'reply', text: destination.text, buttons: [...(destination.buttons ?? [])] };
    case 'function':
      return { ...common, type: 'function', function: destination.function };
    case 'llm':
      return {
        ...common,
        type: 'llm',
        prompt: destination.prompt,
        input: destination.input ?? null,
        model: destination.model ?? null,
        maxTokens: destination.maxTokens ?? DEFAULT_LLM.maxTokens,
        temperature: destination.temperature ?? DEFAULT_LLM.temperature,
        timeoutMs: destination.timeoutMs ?? DEFAULT_LLM.timeoutMs,
      };
    case 'agent':
      return {
        ...common,
        type: 'agent',
        url: destination.url,
        mode: destination.mode ?? DEFAULT_AGENT.mode,
        instructions: destination.instructions ?? null,
        tools: [...(destination.tools ?? [])],
        timeoutMs: destination.timeoutMs ?? DEFAULT_AGENT.timeoutMs,
      };
    case 'workflow':
      return { ...common, type: 'workflow', url: destination.url };
    case 'webhook':
      return { ...common, type: 'webhook', url: destination.url, ...(destination.on === 'reviewed' ? { on: 'reviewed' as const } : {}) };
    case 'http':
      return {
        ...common,
        type: 'http',
        url: destination.url,
        method: destination.method ?? DEFAULT_HTTP_METHOD,
        body: destination.body ?? null,
      };
  }
}

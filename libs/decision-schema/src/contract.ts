// The contract of a decision's active version (GET /v1/decisions/{slug} and the MCP tool get_decision): what a
// caller needs to send a state and read the answers. Never the full schema: policies, composites, settings and
// destinations (URLs, headers) stay private.
import { exampleState } from './state';
import { levelLabel } from './outcomes';
import {
  ACTIONS,
  type Action,
  type ChoiceOption,
  type JsonValue,
  type NormalizedQuestion,
  type NormalizedSchema,
  type QuestionKind,
  type RichText,
  type StateSchema,
} from './schema-types';

export interface ContractLevel {
  label: string;
  description?: RichText;
  rubric?: JsonValue;
}

export interface ContractQuestion {
  key: string;
  kind: QuestionKind;
  instructions: RichText;
  options?: ChoiceOption[];
  levels?: ContractLevel[];
  criterion?: RichText;
}

export interface DecisionContract {
  slug: string;
  status: string;
  version: number;
  state_schema: StateSchema;
  example_state: unknown;
  questions: ContractQuestion[];
  actions: Action[];
  fallback_action: Action;
}

export function decisionContract(args: { slug: string; status: string; version: number; schema: NormalizedSchema }): DecisionContract {
  const { slug, status, version, schema } = args;
  return {
    slug,
    status,
    version,
    state_schema: structuredClone(schema.state),
    example_state: exampleState(schema),
    questions: schema.questions.map(contractQuestion),
    actions: [...ACTIONS],
    fallback_action: schema.fallbackAction,
  };
}

function contractQuestion(question: NormalizedQuestion): ContractQuestion {
  const base = { key: question.key, kind: question.kind, instructions: question.instructions };
  switch (question.kind) {
    case 'choice':
      return { ...base, options: question.options.map((option) => ({ value: option.value, description: option.description })) };
    case 'score':
      return {
        ...base,
        levels: question.levels.map((level, i): ContractLevel => {
          if (typeof level === 'string') return { label: level };
          if ('rubric' in level) return { label: levelLabel(level, i), rubric: level.rubric };
          return level.description === null ? { label: level.label } : { label: level.label, description: level.description };
        }),
      };
    case 'probability':
      return { ...base, criterion: question.criterion };
  }
}

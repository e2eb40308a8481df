import type { MessageKey } from './i18n';

type Translate = (key: MessageKey, vars?: Record<string, string | number>) => string;

const LEAVES: Record<string, MessageKey> = {
  type: 'ed.field.type',
  description: 'ed.field.description',
  required: 'ed.field.required',
  enum: 'ed.field.enum',
  key: 'ed.question.key',
  kind: 'ed.question.kind',
  instructions: 'ed.question.instructions',
  minConfidence: 'ed.question.minConfidence',
  criterion: 'ed.question.criterion',
  threshold: 'ed.question.threshold',
  options: 'ed.question.options',
  levels: 'ed.question.levels',
  value: 'ed.word.value',
  label: 'ed.question.level',
  rubric: 'ed.word.rubric',
  context: 'ed.context',
  fallbackAction: 'ed.fallbackAction',
  settings: 'ed.settings',
  engine: 'ed.settings.engine',
  model: 'ed.settings.model',
  timeoutMs: 'ed.settings.timeoutMs',
  onEngineError: 'ed.settings.onEngineError',
  storeInput: 'ed.settings.storeInput',
  storeOutput: 'ed.settings.storeOutput',
  questions: 'ed.questions',
  composites: 'ed.composites',
  policies: 'ed.policies',
  destinations: 'ed.destinations',
  state: 'ed.state',
  url: 'ed.word.url',
  when: 'ed.word.when',
  action: 'ed.word.action',
  terms: 'ed.word.terms',
  and: 'rule.and',
  question: 'comp.question',
  composite: 'cond.operand',
  op: 'cond.op',
  weight: 'ed.word.weight',
  headers: 'dest.headers',
  params: 'dest.params',
  method: 'dest.method',
  body: 'dest.body',
  text: 'dest.text',
  buttons: 'dest.buttons',
  function: 'dest.function',
  prompt: 'dest.prompt',
  input: 'dest.input',
  mode: 'dest.mode',
  tools: 'dest.tools',
  from: 'dest.paramFrom',
};

/** Items of these lists are named by position from 1 (as the form numbers them) and by their key when they have one. */
const ITEMS: Record<string, MessageKey> = {
  questions: 'ed.question',
  options: 'ed.word.option',
  levels: 'ed.word.level',
  composites: 'ed.word.composite',
  policies: 'ed.word.policy',
  destinations: 'ed.word.destination',
  enum: 'ed.word.enumValue',
  terms: 'ed.word.term',
  and: 'cond.n',
  when: 'cond.n',
  buttons: 'ed.word.button',
  tools: 'ed.word.tool',
};

/** A rule's extra conditions are numbered after its `when`, which the form counts as condition 1. */
const FIRST_NUMBER: Record<string, number> = { and: 2 };

/**
 * A validator path ("questions.4.options.2.value") in the form's own words ("Question 5 (refund) › Option 3 ›
 * Value"): positions count from 1 and items are named by their key where they have one.
 */
export function describePath(path: string, doc: unknown, t: Translate): string {
  if (path === '') return t('ed.word.schema');
  const parts = path.split('.');
  const words: string[] = [];
  let node: unknown = doc;
  let parent = '';
  for (const part of parts) {
    const child = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
    if (/^\d+$/.test(part) && ITEMS[parent]) {
      const key = child !== null && typeof child === 'object' ? (child as { key?: unknown }).key : undefined;
      const n = Number(part) + (FIRST_NUMBER[parent] ?? 1);
      const value =
        typeof child === 'object' && child !== null && typeof (child as { value?: unknown }).value === 'string'
          ? (child as { value: string }).value
          : undefined;
      const name = typeof key === 'string' && key !== '' ? key : typeof child === 'string' && child !== '' ? child : value;
      // The item's name replaces its list's: "Question 5" says it is among the questions.
      words[words.length - 1] = `${t(ITEMS[parent]!, { n })}${name ? ` (${name})` : ''}`;
    } else if (parent === 'fields') {
      words[words.length - 1] = `${t('ed.field')} ${part}`;
    } else if (part === 'fields' && parent === 'state') {
      words.push(t('ed.word.fields'));
    } else {
      words.push(LEAVES[part] ? t(LEAVES[part]!) : part);
    }
    parent = part;
    node = child;
  }
  return words.join(' › ');
}

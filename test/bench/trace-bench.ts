// The rule trace's CPU cost next to the evaluation it describes, on a decision with composites and rules of five
// conditions: `npm run bench:trace` prints microseconds per run for each and the trace's share.
import { say } from './bench-support';
import { evaluate, traceEvaluation, validateSchema, type Distributions } from '@ds/decision-schema';

const QUESTIONS = 8;
const RULES = 20;

function schemaInput() {
  const questions = Array.from({ length: QUESTIONS }, (_, i) =>
    i % 2 === 0
      ? { key: `p${i}`, kind: 'probability', instructions: 'Judge it.', criterion: 'It holds' }
      : { key: `c${i}`, kind: 'choice', instructions: 'Pick one.', options: [{ value: 'a' }, { value: 'b' }, { value: 'c' }] },
  );
  const composites = [{ key: 'risk', terms: [0, 2, 4].map((i) => ({ question: `p${i}`, weight: i + 1 })) }];
  const policies = Array.from({ length: RULES }, (_, r) => ({
    when: { on: 'answer', question: 'p0', op: 'gte', value: 0.5 + r / 100 },
    and: [
      { on: 'confidence', question: 'p2', op: 'gte', value: 0.1 },
      { on: 'answer', question: 'c1', op: 'eq', value: 'a' },
      { on: 'composite', composite: 'risk', op: 'gt', value: 0.99 },
      { on: 'answer', question: 'p4', op: 'lt', value: 0.9 },
    ],
    action: 'block',
  }));
  return { state: { type: 'object', fields: { message: { type: 'string' } } }, questions, composites, policies, fallbackAction: 'escalate' };
}

const checked = validateSchema(schemaInput());
if (!checked.valid) throw new Error(JSON.stringify(checked.issues));
const schema = checked.schema;
const PROBABILITY: Record<string, number> = { yes: 0.7, no: 0.3 };
const CHOICE: Record<string, number> = { a: 0.6, b: 0.3, c: 0.1, other: 0 };
const answers: Distributions = Object.fromEntries(schema.questions.map((question) => [question.key, question.kind === 'probability' ? PROBABILITY : CHOICE]));

function perRunMicros(work: () => unknown, runs: number): number {
  const started = process.cpuUsage();
  for (let i = 0; i < runs; i++) work();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / runs;
}

const RUNS = 20_000;
// Warm up both paths so the JIT has compiled them before anything is measured.
perRunMicros(() => traceEvaluation(schema, evaluate(schema, answers)), RUNS);
const evaluation = evaluate(schema, answers);
const evaluateOnly = perRunMicros(() => evaluate(schema, answers), RUNS);
const traceOnly = perRunMicros(() => traceEvaluation(schema, evaluation), RUNS);
const serialized = perRunMicros(() => JSON.stringify(traceEvaluation(schema, evaluation)), RUNS);
const bytes = JSON.stringify(traceEvaluation(schema, evaluation)).length;
say(`decision: ${QUESTIONS} questions, 1 composite, ${RULES} rules of 5 conditions; ${RUNS} runs each`);
say(`evaluate:                 ${evaluateOnly.toFixed(2)} µs CPU per run`);
say(`trace:                    ${traceOnly.toFixed(2)} µs CPU per run`);
say(`trace + JSON for the row: ${serialized.toFixed(2)} µs CPU per run, ${bytes} bytes`);

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { decisionContract, validateSchema, type NormalizedSchema } from '@ds/decision-schema';
import { decisionOpenApiDocument } from './decision-document';
import { openApiDocument } from './document';
import { typeOf, typeScriptClient } from './typescript-client';

function normalized(schema: unknown): NormalizedSchema {
  const result = validateSchema(schema);
  if (!result.valid) throw new Error(JSON.stringify(result.issues));
  return result.schema;
}

/**
 * Type-checks programs that import the generated client as ./client, all in one compilation (the compiler is
 * slow to start); answers each program's errors.
 */
function compileErrors(client: string, programs: Record<string, string>): Record<string, string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'client-'));
  try {
    writeFileSync(join(dir, 'client.ts'), client);
    for (const [name, text] of Object.entries(programs)) writeFileSync(join(dir, `${name}.ts`), text);
    const program = ts.createProgram(
      Object.keys(programs).map((name) => join(dir, `${name}.ts`)),
      {
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.CommonJS,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
        types: [],
      },
    );
    const errors: Record<string, string[]> = Object.fromEntries(['client', ...Object.keys(programs)].map((name) => [name, []]));
    for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
      const file = diagnostic.file ? diagnostic.file.fileName.slice(dir.length + 1).replace(/\.ts$/, '') : 'client';
      const list = errors[file];
      if (list === undefined) throw new Error(`a diagnostic in a file the test did not write: ${file}`);
      list.push(ts.flattenDiagnosticMessageText(diagnostic.messageText, ' '));
    }
    return errors;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const schema = normalized({
  state: { type: 'object', fields: { message: { type: 'string', required: true }, plan: { type: 'string', enum: ['free', 'pro'] } } },
  questions: [
    {
      key: 'intent',
      kind: 'choice',
      instructions: 'Intent of `message`?',
      options: [
        { value: 'refund', description: null },
        { value: 'exchange', description: null },
      ],
    },
    { key: 'urgency', kind: 'score', instructions: 'How upset?', levels: ['calm', 'furious'] },
    { key: 'fraud', kind: 'probability', instructions: 'Fraud?', criterion: 'Signs of fraud' },
  ],
  fallbackAction: 'escalate',
});
const client = typeScriptClient(
  decisionOpenApiDocument({ serverUrl: 'https://api.example.com' }, decisionContract({ slug: 'triage', status: 'deployed', version: 2, schema })),
);

describe('the TypeScript client generated from a per-decision document', () => {
  it('compiles, types the state and every answer of the decision, and refuses programs that get them wrong', () => {
    const errors = compileErrors(client, {
      good: `
        import { createClient, type Result } from './client';
        export async function main(): Promise<string> {
          const api = createClient({ token: 'svc_test_x' });
          const run = await api.runDecision({ body: { state: { message: 'hi', plan: 'pro', extra: 1 } }, query: { include: 'probabilities' } });
          const intent: 'refund' | 'exchange' | 'other' | undefined = 'intent' in run.result ? run.result.intent : undefined;
          const urgency: 'calm' | 'furious' | undefined = 'urgency' in run.result ? run.result.urgency : undefined;
          const fraud: number | undefined = 'fraud' in run.result ? run.result.fraud : undefined;
          const contract = await api.getDecision();
          const viaHook = await api.runDecisionFromSecretUrl({ path: { token: 'whk_x' }, body: { state: { message: 'x' } } });
          const empty: Result = {};
          return [intent, urgency, fraud, contract.slug, viaHook.action, Object.keys(empty).length].join();
        }`,
      missingField: `import { createClient } from './client'; export const p = createClient().runDecision({ body: { state: { plan: 'pro' } } });`,
      wrongEnum: `import { createClient } from './client'; export const p = createClient().runDecision({ body: { state: { message: 'x', plan: 'gold' } } });`,
      unknownOption: `
        import { createClient } from './client';
        export async function main() { const run = await createClient().runDecision({ body: { state: { message: 'x' } } }); return 'intent' in run.result && run.result.intent === 'upgrade'; }`,
      unknownQuestion: `
        import { createClient } from './client';
        export async function main() { const run = await createClient().runDecision({ body: { state: { message: 'x' } } }); return run.result.unknown_question; }`,
    });
    expect({ client: errors.client, good: errors.good }).toEqual({ client: [], good: [] });
    expect(errors.missingField?.join()).toMatch(/message/);
    expect(errors.wrongEnum?.join()).toMatch(/"gold"/);
    expect(errors.unknownOption?.join()).toMatch(/"upgrade"/);
    expect(errors.unknownQuestion?.join()).toMatch(/unknown_question/);
  });

  it('the whole API compiles as a client too', () => {
    const whole = typeScriptClient(openApiDocument({ serverUrl: 'https://api.example.com' }));
    const errors = compileErrors(whole, {
      usage: `
        import { createClient, ApiError } from './client';
        export async function main() {
          const api = createClient({ token: 'svc_live_x' });
          const me = await api.getAccount();
          const page = await api.listExecutions({ query: { limit: 10, status: 'error' } });
          try { await api.runDecision({ path: { slug: 'a' }, body: { state: 'text' } }); } catch (error) { if (error instanceof ApiError) return error.status; }
          return me.plan.rate_limit_per_minute + page.data.length;
        }`,
    });
    expect(errors).toEqual({ client: [], usage: [] });
  });
});

describe('typeOf', () => {
  it.each([
    [{ type: ['string', 'null'] }, 'string | null'],
    [{ enum: ['a', 1, null] }, '"a" | 1 | null'],
    [{ const: 'x' }, '"x"'],
    [{ type: 'array', items: { type: 'integer' } }, 'Array<number>'],
    [{ type: 'object', properties: { a: { type: 'string' }, 'b-c': { type: 'number' } }, required: ['a'] }, '{ a: string; "b-c"?: number; }'],
    [{ type: 'object', additionalProperties: { type: 'number' } }, '{ [key: string]: number; }'],
    [{ type: 'object', maxProperties: 0 }, 'Record<string, never>'],
    [{ $ref: '#/components/schemas/Run' }, 'Run'],
    [{ anyOf: [{ type: 'string' }, { type: 'number' }] }, '(string) | (number)'],
    [{}, 'unknown'],
  ] as const)('%j is %s', (schema, expected) => {
    expect(typeOf(schema as never)).toBe(expected);
  });
});

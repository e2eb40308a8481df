import type { NormalizedSchema, StateSchema } from '../schema-types';
import { checkStateAlone, exampleState } from '../state';
import { validateSchema } from '../validate-schema';
import type { Template } from './template';

interface TemplateSample {
  state: StateSchema;
  sample: unknown;
}

const normalizedSamples = new WeakMap<readonly Template[], TemplateSample[]>();

function samplesOf(templates: readonly Template[]): TemplateSample[] {
  let samples = normalizedSamples.get(templates);
  if (!samples) {
    samples = templates.flatMap((template) => {
      const checked = validateSchema(template.schema);
      return checked.valid ? [{ state: checked.schema.state, sample: template.sample_state }] : [];
    });
    normalizedSamples.set(templates, samples);
  }
  return samples;
}

function sameShape(a: StateSchema, b: StateSchema): boolean {
  if (a.type !== b.type) return false;
  if (a.type === 'list' && b.type === 'list') return a.items === b.items;
  if (a.type === 'object' && b.type === 'object') {
    const names = Object.keys(a.fields);
    return names.length === Object.keys(b.fields).length && names.every((name) => b.fields[name]?.type === a.fields[name]!.type);
  }
  return true;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An object state built from the template whose fields overlap the schema's most (by name and type), each shared
 * field from the sample, the rest from the generated example; null when no template shares at least half the fields.
 */
function closestObjectSample(schema: NormalizedSchema, samples: TemplateSample[]): Record<string, unknown> | null {
  if (schema.state.type !== 'object') return null;
  const fields = schema.state.fields;
  const names = Object.keys(fields);
  let best: { shared: string[]; sample: Record<string, unknown> } | null = null;
  for (const candidate of samples) {
    if (candidate.state.type !== 'object' || !isRecord(candidate.sample)) continue;
    const theirs = candidate.state.fields;
    const sample = candidate.sample;
    const shared = names.filter((name) => theirs[name]?.type === fields[name]!.type && sample[name] !== undefined);
    if (shared.length > (best?.shared.length ?? 0)) best = { shared, sample };
  }
  if (!best || best.shared.length * 2 < names.length) return null;
  const example = exampleState(schema) as Record<string, unknown>;
  return Object.fromEntries(
    names.map((name) => {
      const value = best.shared.includes(name) ? best.sample[name] : undefined;
      const allowed = fields[name]!.enum;
      const fits = value !== undefined && (allowed === null || (typeof value === 'string' && allowed.includes(value)));
      return [name, fits ? value : example[name]];
    }),
  );
}

/**
 * The state a playground starts from: a template's sample when the decision's state is shaped like that template's
 * (as it is after starting from it), or built from the closest template's sample where the author changed some
 * fields; else the generated example ("example", 0, the first enum value). Whatever it answers, the schema accepts.
 */
export function startingState(schema: NormalizedSchema, templates: readonly Template[]): unknown {
  const samples = samplesOf(templates);
  const accepted = (state: unknown) => state !== null && state !== undefined && checkStateAlone(schema, state).ok;
  const exact = samples.find((candidate) => sameShape(candidate.state, schema.state) && accepted(candidate.sample));
  if (exact && (schema.state.type === 'object' || samples.filter((candidate) => sameShape(candidate.state, schema.state)).length === 1)) {
    return exact.sample;
  }
  const closest = closestObjectSample(schema, samples);
  return closest && accepted(closest) ? closest : exampleState(schema);
}

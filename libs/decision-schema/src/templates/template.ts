import type { SchemaInput } from '../schema-types';

export interface TemplateSummary {
  id: string;
  name: string;
  description: string;
  category: string;
  /** The decision patterns the template shows, e.g. classification, approval, risk-scoring. */
  patterns: string[];
}

export interface Template extends TemplateSummary {
  /** A complete decision schema as an author would write it (defaults left to normalization). */
  schema: unknown;
  /** A state the schema accepts. */
  sample_state: unknown;
}

/** Types the schema as an author's input, so a template that drifts from the schema's shape fails to compile. */
export function defineTemplate(template: TemplateSummary & { schema: SchemaInput; sample_state: unknown }): Template {
  return template;
}

export function templateSummary(template: Template): TemplateSummary {
  const { id, name, description, category, patterns } = template;
  return { id, name, description, category, patterns: [...patterns] };
}

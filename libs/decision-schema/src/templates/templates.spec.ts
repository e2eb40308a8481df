import { checkDecisionMeta, isValidSlug } from '../meta';
import { validateState } from '../state';
import { validateSchema } from '../validate-schema';
import { TEMPLATES, templateSummary } from './index';

describe('built-in templates', () => {
  it('are nine, with unique ids', () => {
    expect(TEMPLATES).toHaveLength(9);
    expect(new Set(TEMPLATES.map((t) => t.id)).size).toBe(9);
  });

  it('cover the nine use cases', () => {
    expect(TEMPLATES.map((t) => t.id).sort()).toEqual(
      [
        'churn-risk',
        'code-change-risk',
        'content-moderation',
        'fraud-screening',
        'incident-severity',
        'kyc-review',
        'lead-qualification',
        'refund-approval',
        'support-triage',
      ].sort(),
    );
  });

  describe.each(TEMPLATES.map((t) => [t.id, t] as const))('%s', (_id, template) => {
    const result = validateSchema(template.schema);

    it('has a schema that validates', () => {
      expect(result.valid ? [] : result.issues).toEqual([]);
    });

    it('has a sample state the schema accepts', () => {
      if (!result.valid) throw new Error('schema invalid');
      expect(validateState(result.schema, template.sample_state)).toEqual({ ok: true });
    });

    it('can be created as a decision under its own id', () => {
      expect(isValidSlug(template.id)).toBe(true);
      expect(checkDecisionMeta({ slug: template.id, name: template.name, description: template.description })).toEqual([]);
    });

    it('is realistic: several questions mixing kinds, composites, policies', () => {
      if (!result.valid) throw new Error('schema invalid');
      const kinds = new Set(result.schema.questions.map((q) => q.kind));
      expect(result.schema.questions.length).toBeGreaterThanOrEqual(3);
      expect(kinds.size).toBeGreaterThanOrEqual(2);
      expect(result.schema.composites.length).toBeGreaterThanOrEqual(1);
      expect(result.schema.policies.length).toBeGreaterThanOrEqual(3);
      expect(template.patterns.length).toBeGreaterThan(0);
    });
  });

  it('summaries carry only the summary fields', () => {
    // TEMPLATES holds nine, as the first test checks.
    const summary = templateSummary(TEMPLATES[0]!);
    expect(Object.keys(summary).sort()).toEqual(['category', 'description', 'id', 'name', 'patterns']);
    expect(summary).not.toHaveProperty('schema');
  });
});

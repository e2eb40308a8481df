import type { NormalizedSchema } from '../schema-types';
import { exampleState } from '../state';
import { validateSchema } from '../validate-schema';
import { TEMPLATES } from './index';
import { startingState } from './sample-state';

function normalized(input: unknown): NormalizedSchema {
  const checked = validateSchema(input);
  if (!checked.valid) throw new Error(JSON.stringify(checked.issues));
  return checked.schema;
}

const template = (id: string) => TEMPLATES.find((candidate) => candidate.id === id)!;
const schemaOf = (id: string) => structuredClone(template(id).schema) as any;

describe('startingState', () => {
  it.each(TEMPLATES.map((candidate) => [candidate.id] as const))('starts a decision made from %s at its sample', (id) => {
    expect(startingState(normalized(schemaOf(id)), TEMPLATES)).toEqual(template(id).sample_state);
  });

  it('keeps the sample’s fields when the author adds one, and fills the new one with an example', () => {
    const schema = schemaOf('support-triage');
    schema.state.fields.region = { type: 'string', enum: ['eu', 'us'] };
    const state = startingState(normalized(schema), TEMPLATES) as Record<string, unknown>;
    expect(state).toEqual({ ...(template('support-triage').sample_state as object), region: 'eu' });
  });

  it('takes an enum value from the sample only while the enum still allows it', () => {
    const schema = schemaOf('support-triage');
    schema.state.fields.channel = { type: 'string', enum: ['phone', 'letter'] };
    const state = startingState(normalized(schema), TEMPLATES) as Record<string, unknown>;
    expect(state.channel).toBe('phone');
    expect(state.message).toBe((template('support-triage').sample_state as Record<string, unknown>).message);
  });

  it('generates the example for a state no template resembles', () => {
    const own: NormalizedSchema = {
      ...normalized(schemaOf('support-triage')),
      state: {
        type: 'object',
        fields: {
          sku: { type: 'string', required: true, description: null, enum: null },
          quantity: { type: 'integer', required: false, description: null, enum: null },
        },
      },
    };
    expect(startingState(own, TEMPLATES)).toEqual(exampleState(own));
    expect(startingState(own, TEMPLATES)).toEqual({ sku: 'example', quantity: 0 });
  });

  it('uses a text or list sample only when one template alone has that shape', () => {
    const text = normalized(schemaOf('content-moderation'));
    expect(startingState(text, TEMPLATES)).toEqual(template('content-moderation').sample_state);
    const twoTextTemplates = [template('content-moderation'), { ...template('content-moderation'), id: 'copy', sample_state: 'another text' }];
    expect(startingState(text, twoTextTemplates)).toBe('example');
  });

  it('never answers a sample the schema refuses', () => {
    const broken = [{ ...template('refund-approval'), sample_state: { unexpected: true } }];
    const schema = normalized(schemaOf('refund-approval'));
    expect(startingState(schema, broken)).toEqual(exampleState(schema));
  });
});

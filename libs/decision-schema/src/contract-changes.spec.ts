import { validateSchema } from './validate-schema';
import { fullSchema } from './__fixtures__/schemas';
import { breakingChanges } from './contract-changes';

function normalize(schema: unknown) {
  const checked = validateSchema(schema);
  if (!checked.valid) throw new Error(JSON.stringify(checked.issues));
  return checked.schema;
}

function edited(change: (schema: any) => void) {
  const schema = fullSchema();
  change(schema);
  return normalize(schema);
}

const active = normalize(fullSchema());

describe('breakingChanges', () => {
  it('finds nothing in an unchanged schema, nor in additions callers need not send or read differently', () => {
    expect(breakingChanges(active, active)).toEqual([]);
    const additive = edited((s) => {
      s.state.fields.note = { type: 'string' };
      s.state.fields.plan.enum.push('team');
      s.state.fields.message.required = false;
      s.questions[0].options.push({ value: 'repair' });
      s.questions.push({ key: 'extra', kind: 'probability', instructions: 'x', criterion: 'y' });
      s.context = 'changed';
      s.fallbackAction = 'continue';
    });
    expect(breakingChanges(active, additive)).toEqual([]);
  });

  it('names a new required field, a field made required, a removed field and a changed type', () => {
    const changed = edited((s) => {
      s.state.fields.order_id = { type: 'string', required: true };
      s.state.fields.amount.required = true;
      delete s.state.fields.tags;
      s.state.fields.customer.type = 'string';
    });
    expect(breakingChanges(active, changed)).toEqual(
      [
        { kind: 'fieldType', subject: 'customer: object → string' },
        { kind: 'fieldAdded', subject: 'order_id' },
        { kind: 'fieldRequired', subject: 'amount' },
        { kind: 'fieldRemoved', subject: 'tags' },
      ].sort(
        (a, b) =>
          ['fieldRequired', 'fieldType', 'fieldAdded', 'fieldRemoved'].indexOf(a.kind) -
          ['fieldRequired', 'fieldType', 'fieldAdded', 'fieldRemoved'].indexOf(b.kind),
      ),
    );
  });

  it('names sub-field changes by their dotted path', () => {
    const withAddress = (fields: Record<string, unknown>) =>
      edited((s) => {
        s.state.fields.address = { type: 'object', fields };
      });
    const before = withAddress({ street: { type: 'string' }, zip: { type: 'string', enum: ['1', '2'] } });
    expect(breakingChanges(before, withAddress({ street: { type: 'string' }, zip: { type: 'string', enum: ['1', '2'] }, city: { type: 'string' } }))).toEqual(
      [],
    );
    expect(
      breakingChanges(
        before,
        withAddress({ street: { type: 'string', required: true }, zip: { type: 'string', enum: ['1'] }, city: { type: 'string', required: true } }),
      ),
    ).toEqual([
      { kind: 'fieldRequired', subject: 'address.street' },
      { kind: 'enumNarrowed', subject: 'address.zip', values: ['2'] },
      { kind: 'fieldAdded', subject: 'address.city' },
    ]);
    expect(breakingChanges(before, withAddress({ street: { type: 'integer' } }))).toEqual([
      { kind: 'fieldType', subject: 'address.street: string → integer' },
      { kind: 'fieldRemoved', subject: 'address.zip' },
    ]);
  });

  it('names a narrowed enum with the values dropped, and an enum put on a free field', () => {
    const changed = edited((s) => {
      s.state.fields.plan.enum = ['pro'];
      s.state.fields.message.enum = ['hello'];
    });
    expect(breakingChanges(active, changed)).toEqual([
      { kind: 'enumAdded', subject: 'message' },
      { kind: 'enumNarrowed', subject: 'plan', values: ['free'] },
    ]);
  });

  it('names a changed state type and changed list items', () => {
    expect(
      breakingChanges(
        active,
        edited((s) => (s.state = { type: 'text' })),
      ),
    ).toEqual([{ kind: 'stateType', subject: 'object → text' }]);
    const list = edited((s) => (s.state = { type: 'list', items: 'string' }));
    expect(
      breakingChanges(
        list,
        edited((s) => (s.state = { type: 'list', items: 'object' })),
      ),
    ).toEqual([{ kind: 'listItems', subject: 'string → object' }]);
  });

  it('names removed questions, options and levels, and a question that changed kind', () => {
    const bare = (s: any) => {
      s.composites = [];
      s.policies = [];
      s.questions[0].options.push({ value: 'repair' });
      s.questions[1].levels.push('livid');
    };
    const before = edited(bare);
    const changed = edited((s) => {
      bare(s);
      s.questions[0].options.splice(1, 1);
      s.questions[1].levels.splice(1, 1);
      s.questions[2] = { key: 'fraud', kind: 'choice', instructions: 'x', options: [{ value: 'yes' }, { value: 'no' }] };
    });
    expect(breakingChanges(before, changed)).toEqual([
      { kind: 'optionRemoved', subject: 'intent.exchange' },
      { kind: 'levelRemoved', subject: 'urgency.annoyed' },
      { kind: 'questionKind', subject: 'fraud: probability → choice' },
    ]);
    const removed = edited((s) => {
      bare(s);
      s.questions.splice(1, 1);
    });
    expect(breakingChanges(before, removed)).toEqual([{ kind: 'questionRemoved', subject: 'urgency' }]);
  });
});

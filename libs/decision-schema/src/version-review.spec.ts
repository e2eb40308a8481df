import { fullSchema, normalized } from './__fixtures__/schemas';
import { longestCommonSubsequence, missingSecrets, pairRules, reviewVersions, type VersionReview } from './version-review';

type Json = Record<string, any>;

function edited(change: (schema: Json) => void) {
  const schema = fullSchema() as Json;
  change(schema);
  return normalized(schema);
}

const active = normalized(fullSchema());
const texts = (review: VersionReview) => review.areas.flatMap((group) => group.items.map((item) => item.text));
const itemsOf = (review: VersionReview) => review.areas.flatMap((group) => group.items);

describe('reviewVersions', () => {
  it('describes a first version by what it holds, not as one change from nothing', () => {
    const review = reviewVersions(null, active);
    expect(review).toEqual({
      first: true,
      summary: '3 questions (intent, urgency, fraud), 1 composite (risk), 3 rules, 2 destinations (apology, ops)',
      changes: 0,
      areas: [],
      breaking: [],
    });
  });

  it('leaves out the parts a version does not have and counts one in the singular', () => {
    const lean = edited((s) => {
      s.questions = [s.questions[2]];
      s.composites = [];
      s.policies = [{ when: { on: 'answer', question: 'fraud', op: 'gte', value: 0.9 }, action: 'block' }];
      s.destinations = [s.destinations[1]];
    });
    expect(reviewVersions(null, lean).summary).toBe('1 question (fraud), 1 rule, 1 destination (ops)');
  });

  it('finds nothing between a version and itself', () => {
    expect(reviewVersions(active, active)).toMatchObject({ first: false, changes: 0, areas: [], breaking: [] });
  });

  describe('rules', () => {
    const inserted = {
      when: { on: 'answer', question: 'intent', op: 'eq', value: 'refund' },
      and: [{ on: 'score', question: 'urgency', op: 'gte', value: 2 }],
      action: 'escalate',
    };

    it('reads one rule inserted at the top as exactly one change, in words', () => {
      const review = reviewVersions(
        active,
        edited((s) => s.policies.unshift(inserted)),
      );
      expect(review.changes).toBe(1);
      expect(itemsOf(review)).toEqual([
        {
          area: 'rules',
          kind: 'added',
          subject: 'rule 1',
          text: 'Rule added at position 1: when `intent` = refund and score of `urgency` ≥ 2 → escalate',
          breaking: false,
        },
      ]);
    });

    it('reads one rule inserted in the middle or at the end as one change', () => {
      expect(
        texts(
          reviewVersions(
            active,
            edited((s) => s.policies.splice(2, 0, inserted)),
          ),
        ),
      ).toEqual(['Rule added at position 3: when `intent` = refund and score of `urgency` ≥ 2 → escalate']);
      expect(
        texts(
          reviewVersions(
            active,
            edited((s) => s.policies.push(inserted)),
          ),
        ),
      ).toEqual(['Rule added at position 4: when `intent` = refund and score of `urgency` ≥ 2 → escalate']);
    });

    it('reads a removed rule as one removal at its old position', () => {
      expect(
        texts(
          reviewVersions(
            active,
            edited((s) => s.policies.shift()),
          ),
        ),
      ).toEqual(['Rule removed from position 1: when `fraud` ≥ 0.9 and confidence of `fraud` ≥ 0.5 → block']);
    });

    it('reads reordered rules as moved, the others unchanged', () => {
      const review = reviewVersions(
        active,
        edited((s) => s.policies.unshift(s.policies.pop())),
      );
      expect(itemsOf(review)).toEqual([
        expect.objectContaining({ kind: 'moved', subject: 'rule 1', text: 'Rule moved from position 3 to 1: when score of `urgency` ≥ 2.5 → escalate' }),
      ]);
      const swapped = reviewVersions(
        active,
        edited((s) => ([s.policies[0], s.policies[1]] = [s.policies[1], s.policies[0]])),
      );
      expect(swapped.changes).toBe(1);
      expect(itemsOf(swapped)[0]!.kind).toBe('moved');
    });

    it('reads an edited threshold as one rule changed, naming the condition', () => {
      expect(
        texts(
          reviewVersions(
            active,
            edited((s) => (s.policies[1].when.value = 0.8)),
          ),
        ),
      ).toEqual(['Rule 2: condition composite `risk` > 0.7 → composite `risk` > 0.8']);
    });

    it('names the conditions of a rule whose action alone changed', () => {
      expect(
        texts(
          reviewVersions(
            active,
            edited((s) => (s.policies[2].action = 'block')),
          ),
        ),
      ).toEqual(['Rule 3, when score of `urgency` ≥ 2.5: action escalate → block']);
    });

    it('says which conditions were added or removed, and a new order of the same conditions', () => {
      expect(
        texts(
          reviewVersions(
            active,
            edited((s) => s.policies[0].and.push({ on: 'answer', question: 'intent', op: 'eq', value: 'refund' })),
          ),
        ),
      ).toEqual(['Rule 1: conditions added: `intent` = refund']);
      expect(
        texts(
          reviewVersions(
            active,
            edited((s) => (s.policies[0].and = [])),
          ),
        ),
      ).toEqual(['Rule 1: conditions removed: confidence of `fraud` ≥ 0.5']);
      expect(
        texts(
          reviewVersions(
            active,
            edited((s) => {
              const rule = s.policies[0];
              [rule.when, rule.and[0]] = [rule.and[0], rule.when];
            }),
          ),
        ),
      ).toEqual(['Rule 1: conditions reordered: confidence of `fraud` ≥ 0.5 and `fraud` ≥ 0.9']);
    });

    it('reads a rule inserted at the top and another edited as two changes', () => {
      const review = reviewVersions(
        active,
        edited((s) => {
          s.policies[2].action = 'continue';
          s.policies.unshift(inserted);
        }),
      );
      expect(texts(review)).toEqual([
        'Rule added at position 1: when `intent` = refund and score of `urgency` ≥ 2 → escalate',
        'Rule 4 (was rule 3), when score of `urgency` ≥ 2.5: action escalate → continue',
      ]);
    });

    it('pairs rules whatever the key order they were written in', () => {
      const reordered = edited(
        (s) => (s.policies[0] = { action: 'block', and: s.policies[0].and, when: { value: 0.9, op: 'gte', question: 'fraud', on: 'answer' } }),
      );
      expect(reviewVersions(active, reordered).changes).toBe(0);
    });
  });

  describe('pairRules and longestCommonSubsequence', () => {
    it('keeps the longest run in order and pairs the rest', () => {
      expect(longestCommonSubsequence(['a', 'b', 'c'], ['x', 'a', 'b', 'c'])).toEqual([
        [0, 1],
        [1, 2],
        [2, 3],
      ]);
      expect(longestCommonSubsequence([], ['a'])).toEqual([]);
      expect(longestCommonSubsequence(['a', 'b'], ['b', 'a'])).toHaveLength(1);
    });

    it('pairs an edit between the same kept neighbours as a change, and leaves what is left added or removed', () => {
      const rule = (value: number, action = 'block') => ({ when: { on: 'composite', composite: 'risk', op: 'gt', value }, and: [], action }) as never;
      const pairing = pairRules([rule(0.1), rule(0.2), rule(0.3)], [rule(0.1), rule(0.25), rule(0.3), rule(0.4)]);
      expect(pairing).toEqual({
        kept: [
          [0, 0],
          [2, 2],
        ],
        moved: [],
        changed: [[1, 1]],
        added: [3],
        removed: [],
      });
      expect(pairRules([rule(0.1), rule(0.2)], [])).toMatchObject({ removed: [0, 1], added: [], kept: [] });
    });
  });

  describe('questions', () => {
    it('says which options were added, and marks removed options breaking', () => {
      const review = reviewVersions(
        active,
        edited((s) => s.questions[0].options.splice(1, 1, { value: 'repair' }, { value: 'critical' })),
      );
      expect(itemsOf(review)).toEqual([
        expect.objectContaining({ area: 'questions', subject: 'intent', text: 'Question `intent`: options added: repair, critical', breaking: false }),
        expect.objectContaining({ text: 'Question `intent`: options removed: exchange', breaking: true }),
      ]);
      expect(review.breaking).toEqual([{ kind: 'optionRemoved', subject: 'intent.exchange' }]);
    });

    it('says a question was added with its kind and options, or removed (breaking)', () => {
      const added = reviewVersions(
        active,
        edited((s) => s.questions.push({ key: 'tone', kind: 'choice', instructions: 'x', options: [{ value: 'angry' }, { value: 'calm' }] })),
      );
      expect(texts(added)).toEqual(['Question `tone` added (choice: angry, calm, other)']);
      const removed = reviewVersions(
        active,
        edited((s) => {
          s.questions.splice(1, 1);
          s.composites[0].terms.splice(1, 1);
          s.policies.pop();
        }),
      );
      expect(itemsOf(removed)).toContainEqual(
        expect.objectContaining({ area: 'questions', kind: 'removed', text: 'Question `urgency` removed', breaking: true }),
      );
      expect(removed.breaking).toEqual([{ kind: 'questionRemoved', subject: 'urgency' }]);
    });

    it('says a question moved, and its kind, instructions, confidence, levels, criterion and threshold changes', () => {
      expect(
        texts(
          reviewVersions(
            active,
            edited((s) => s.questions.unshift(s.questions.pop())),
          ),
        ),
      ).toEqual(['Question `fraud` moved from position 3 to 1']);
      expect(
        texts(
          reviewVersions(
            active,
            edited((s) => {
              s.questions[0].instructions = 'Another text';
              s.questions[0].minConfidence = 0.7;
              s.questions[0].options[0].description = 'Money back';
              s.questions[1].levels = ['calm', 'annoyed', 'furious', 'raging'];
              s.questions[2].criterion = 'Other';
              s.questions[2].threshold = null;
            }),
          ),
        ),
      ).toEqual([
        'Question `intent`: instructions changed',
        'Question `intent`: minimum confidence 0.6 → 0.7',
        'Question `intent`: descriptions changed of options refund',
        'Question `urgency`: levels added: raging',
        'Question `urgency`: descriptions changed of levels annoyed, furious',
        'Question `fraud`: criterion changed',
        'Question `fraud`: threshold 0.8 → none',
      ]);
    });

    it('says levels were reordered, and a kind change is breaking', () => {
      expect(
        texts(
          reviewVersions(
            active,
            edited((s) => s.questions[1].levels.reverse()),
          ),
        ),
      ).toEqual(['Question `urgency`: levels reordered: calm, annoyed, furious → furious, annoyed, calm']);
      const review = reviewVersions(
        active,
        edited((s) => {
          s.questions[2] = { key: 'fraud', kind: 'choice', instructions: 'x', options: [{ value: 'yes' }, { value: 'no' }] };
          s.composites[0].terms[0] = { question: 'fraud', option: 'yes', weight: 3 };
          s.policies[0] = { when: { on: 'answer', question: 'fraud', op: 'eq', value: 'yes' }, action: 'block' };
        }),
      );
      expect(itemsOf(review)[0]).toEqual(
        expect.objectContaining({ area: 'questions', text: 'Question `fraud`: kind probability → choice (choice: yes, no, other)', breaking: true }),
      );
      expect(review.areas.map((group) => group.area)).toEqual(['questions', 'composites', 'rules']);
    });
  });

  it('says what changed in a composite: terms, weights, description; added and removed', () => {
    expect(
      texts(
        reviewVersions(
          active,
          edited((s) => {
            s.composites[0].description = 'Risk';
            s.composites[0].terms[0].weight = 2;
            s.composites[0].terms.splice(1, 1);
            s.composites[0].terms.push({ question: 'intent', option: 'exchange', weight: 0.5 });
            s.composites.push({ key: 'calm', terms: [{ question: 'urgency', weight: -1 }] });
          }),
        ),
      ),
    ).toEqual([
      'Composite `risk`: description changed',
      'Composite `risk`: weight of `fraud` 3 → 2',
      'Composite `risk`: term added: 0.5 × `intent` = exchange',
      'Composite `risk`: term removed: 1 × `urgency`',
      'Composite `calm` added: -1 × `urgency`',
    ]);
    expect(
      texts(
        reviewVersions(
          active,
          edited((s) => {
            s.composites = [];
            s.policies.splice(1, 1);
          }),
        ),
      ),
    ).toEqual(['Composite `risk` removed', 'Rule removed from position 2: when composite `risk` > 0.7 → escalate']);
  });

  it('says what changed in a destination by its key: URL, headers by name only, conditions, params, text; added and removed', () => {
    const review = reviewVersions(
      active,
      edited((s) => {
        s.destinations[1].url = 'https://crm.example.com/hook';
        s.destinations[1].headers = { Authorization: 'Bearer {{secrets.CRM_TOKEN}}' };
        s.destinations[1].when = [];
        s.destinations[0].text = 'Hello';
        s.destinations[0].buttons = [];
        s.destinations[0].params = { name: { from: 'state.customer.name' }, plan: { from: 'state.plan' } };
        s.destinations.push({ key: 'crm_hook', type: 'http', url: 'https://crm.example.com/x', method: 'PUT' });
      }),
    );
    expect(texts(review)).toEqual([
      'Destination apology: reply text changed',
      'Destination apology: buttons Track my refund → none',
      'Destination apology: params added: plan',
      'Destination apology: params changed: name',
      'Destination ops: URL https://hooks.example.com/decisions → https://crm.example.com/hook',
      'Destination ops: sent when action = escalate → always',
      'Destination ops: headers added: Authorization',
      'Destination crm_hook added (http to https://crm.example.com/x)',
    ]);
    expect(texts(review).join('\n')).not.toContain('CRM_TOKEN');
    expect(
      texts(
        reviewVersions(
          active,
          edited((s) => s.destinations.splice(1, 1)),
        ),
      ),
    ).toEqual(['Destination ops removed (webhook to https://hooks.example.com/decisions)']);
    expect(
      texts(
        reviewVersions(
          active,
          edited((s) => (s.destinations[1] = { key: 'ops', type: 'function', function: 'notify' })),
        ),
      ),
    ).toEqual(['Destination ops: type webhook to https://hooks.example.com/decisions → function']);
    const llm = (timeoutMs: number) =>
      edited((s) => (s.destinations = [{ key: 'summary', type: 'llm', prompt: 'Sum up', timeoutMs, model: timeoutMs > 20000 ? 'big' : null }]));
    expect(texts(reviewVersions(llm(20000), llm(24500)))).toEqual(['Destination summary: model none → big', 'Destination summary: timeout 20 s → 24.5 s']);
  });

  it('says each setting in words: "Setting timeout: 8 s → 12 s"', () => {
    const before = edited((s) => (s.settings.timeoutMs = 8000));
    const after = edited((s) => {
      s.settings = { engine: null, model: null, timeoutMs: 12000, onEngineError: 'error', storeInput: true, storeOutput: false, confidenceSource: 'tokens' };
      s.context = null;
    });
    expect(reviewVersions(before, after).areas).toEqual([
      {
        area: 'settings',
        items: [
          'Setting engine: llm → workspace default',
          'Setting model: claude-sonnet → engine default',
          'Setting timeout: 8 s → 12 s',
          'Setting on engine error: fallback → error',
          'Setting keep inputs: off → on',
          'Setting keep answers: on → off',
          'Setting confidence from: model → tokens',
          'Context removed',
        ].map((text) => expect.objectContaining({ area: 'settings', kind: 'changed', text, breaking: false })),
      },
    ]);
  });

  it('says what changed in the contract, breaking changes marked as the deploy confirmation classifies them', () => {
    const review = reviewVersions(
      active,
      edited((s) => {
        s.state.fields.note = { type: 'string' };
        s.state.fields.ticket = { type: 'string', required: true };
        s.state.fields.plan.enum = ['free', 'team'];
        s.state.fields.amount.type = 'integer';
        s.state.fields.message.required = false;
        s.state.fields.message.description = 'Text';
        s.state.fields.customer.fields = { id: { type: 'string', required: true } };
        delete s.state.fields.tags;
        s.fallbackAction = 'continue';
      }),
    );
    expect(itemsOf(review).map((item) => [item.text, item.breaking])).toEqual([
      ['State field `message`: now optional', false],
      ['State field `message`: description changed', false],
      ['State field `amount`: type number → integer', true],
      ['State field `plan`: values added: team', false],
      ['State field `plan`: values removed: pro', true],
      ['State field `customer.id` added (string, required)', true],
      ['State field `note` added (string, optional)', false],
      ['State field `ticket` added (string, required)', true],
      ['State field `tags` removed (array)', true],
      ['Fallback action: escalate → continue', false],
    ]);
    expect(review.breaking.map((change) => change.kind).sort()).toEqual(['enumNarrowed', 'fieldAdded', 'fieldAdded', 'fieldRemoved', 'fieldType']);
    expect(
      texts(
        reviewVersions(
          active,
          edited((s) => (s.state.fields.message.enum = ['a'])),
        ),
      ),
    ).toEqual(['State field `message`: now one of a']);
    expect(
      texts(
        reviewVersions(
          edited((s) => (s.state.fields.message.enum = ['a'])),
          active,
        ),
      ),
    ).toEqual(['State field `message`: any value now accepted']);
    expect(
      itemsOf(
        reviewVersions(
          active,
          edited((s) => (s.state = { type: 'text' })),
        ),
      ),
    ).toEqual([expect.objectContaining({ text: 'State: object → text', breaking: true })]);
  });
});

describe('missingSecrets', () => {
  it('names each header that refers to a secret the workspace does not have, and nothing when all are set', () => {
    const schema = edited((s) => {
      s.destinations[1].headers = { Authorization: 'Bearer {{secrets.CRM_TOKEN}}', 'X-Team': '{{ secrets.TEAM }}-{{secrets.CRM_TOKEN}}' };
    });
    expect(missingSecrets(schema, ['TEAM'])).toEqual([
      { destination: 'ops', header: 'Authorization', secret: 'CRM_TOKEN' },
      { destination: 'ops', header: 'X-Team', secret: 'CRM_TOKEN' },
    ]);
    expect(missingSecrets(schema, ['TEAM', 'CRM_TOKEN'])).toEqual([]);
    expect(missingSecrets(active, [])).toEqual([]);
  });
});

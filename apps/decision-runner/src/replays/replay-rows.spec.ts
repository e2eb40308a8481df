import { compareReplay, normalizeSchema } from '@ds/decision-schema';
import { runLabTask } from '../lab/lab-tasks';
import { summarizeReplay } from './replay-rows';

const { questions } = normalizeSchema({
  state: { type: 'text' },
  questions: [
    { key: 'intent', kind: 'choice', instructions: 'What is wanted?', options: [{ value: 'refund' }, { value: 'exchange' }] },
    { key: 'spam', kind: 'probability', instructions: 'Is it spam?', criterion: 'The message is spam' },
  ],
  fallbackAction: 'escalate',
});

/** Columns as ITEMS_SUMMARY_TEXT writes them: status, old action and answers, new, baseline, the outcome's action. */
const items = [
  ['done', 'refund', { intent: 'refund', spam: 0.1 }, 'refund', { intent: 'refund', spam: 0.2 }, 'refund', { intent: 'refund', spam: 0.1 }, 'refund'],
  ['done', 'refund', { intent: 'refund', spam: 0.1 }, 'escalate', { intent: 'exchange', spam: 0.9 }, 'refund', { intent: 'refund', spam: 0.1 }, null],
  ['failed', 'escalate', { intent: 'exchange', spam: 0.4 }, null, null, 'escalate', { intent: 'exchange', spam: 0.4 }, 'escalate'],
  ['running', 'refund', null, null, null, null, null, null],
  ['pending', 'refund', null, null, null, null, null, null],
  ['pending', 'refund', null, null, null, null, null, null],
  ['cancelled', 'refund', null, null, null, null, null, null],
];

describe('a replay’s summary', () => {
  it('counts every item by status', () => {
    expect(summarizeReplay(questions, null, JSON.stringify(items)).progress).toEqual({ total: 7, done: 2, failed: 1, cancelled: 1, pending: 2, running: 1 });
  });

  it('compares the finished items with the recorded runs, for the replay and for its baseline', () => {
    const summary = summarizeReplay(questions, questions, JSON.stringify(items));
    const recorded = (item: unknown[]) => ({ action: item[1] as string, answers: item[2] as Record<string, string | number> | null });
    const finished = items.filter((item) => item[0] === 'done' || item[0] === 'failed');
    expect(summary.result).toEqual(
      compareReplay(
        questions,
        finished.map((item) => ({
          old: recorded(item),
          new: item[0] === 'done' ? { action: item[3] as string, answers: item[4] as Record<string, string | number> } : null,
          outcomeAction: item[7] as string | null,
        })),
      ),
    );
    expect(summary.result).toMatchObject({ compared: 2, failed: 1, action: { agreed: 1 } });
    // The baseline ran on all three, the failed replay's execution included, and agreed each time.
    expect(summary.baseline).toMatchObject({ compared: 3, action: { agreed: 3, agreement: 1 } });
  });

  it('has no baseline comparison of its own when given no baseline questions, and an empty replay sums to nothing', () => {
    expect(summarizeReplay(questions, null, JSON.stringify(items)).baseline).toBeNull();
    expect(summarizeReplay(questions, null, '[]')).toMatchObject({
      progress: { total: 0, done: 0, failed: 0, cancelled: 0, pending: 0, running: 0 },
      result: { compared: 0, action: { agreed: 0, agreement: null } },
    });
  });

  it('reads a reviewer’s outcome of the replayed run, and compares each side with it', () => {
    const reviewed = [
      [...items[0]!, { action: 'refund', answers: { intent: 'refund', spam: false } }],
      [...items[1]!, { action: 'refund', answers: { intent: 'refund', spam: false } }],
      ...items.slice(2),
    ];
    expect(summarizeReplay(questions, null, JSON.stringify(reviewed)).result.reviewers).toEqual({
      executions: 2,
      action: { compared: 2, old: 1, new: 0.5 },
      questions: [
        { key: 'intent', compared: 2, old: 1, new: 0.5 },
        { key: 'spam', compared: 2, old: 1, new: 0.5 },
      ],
    });
    expect(summarizeReplay(questions, null, JSON.stringify(items)).result.reviewers.executions).toBe(0);
  });

  it('is what a lab thread answers for a replay task', () => {
    const text = JSON.stringify(items);
    expect(runLabTask({ kind: 'replay', questions, baselineQuestions: questions, items: text })).toEqual(summarizeReplay(questions, questions, text));
  });
});

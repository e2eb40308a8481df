import {
  answerMatchesReview,
  answersAgree,
  checkReplayPlan,
  checkReplaySelectionQuery,
  compareReplay,
  REPLAY_DAILY_CAP,
  replayAllowance,
  type ReplayedExecution,
} from './replay';
import type { NormalizedQuestion } from './schema-types';

const intent = { key: 'intent', kind: 'choice' } as NormalizedQuestion;
const urgency = { key: 'urgency', kind: 'score' } as NormalizedQuestion;
const fraud = { key: 'fraud', kind: 'probability', threshold: 0.7 } as NormalizedQuestion;
const plain = { key: 'plain', kind: 'probability', threshold: null } as NormalizedQuestion;

describe('checkReplayPlan', () => {
  it.each([
    [
      { version: null, last: 200 },
      { version: null, selection: { last: 200 } },
    ],
    [{ last: 1 }, { version: null, selection: { last: 1 } }],
    [
      { version: 3, last: 1000 },
      { version: 3, selection: { last: 1000 } },
    ],
    [
      { version: 2, from: '2026-11-01T00:00:00Z', to: '2026-11-02T00:00:00+01:00' },
      { version: 2, selection: { from: '2026-11-01T00:00:00.000Z', to: '2026-11-01T23:00:00.000Z' } },
    ],
    [
      { from: '2024-02-29', to: '2024-03-01' },
      { version: null, selection: { from: '2024-02-29T00:00:00.000Z', to: '2024-03-01T00:00:00.000Z' } },
    ],
  ])('takes %j', (body, plan) => {
    expect(checkReplayPlan(body)).toEqual({ ok: true, plan });
  });

  it.each([
    [null, ''],
    [[], ''],
    [{}, ''],
    [{ last: 0 }, 'last'],
    [{ last: 1001 }, 'last'],
    [{ last: 1.5 }, 'last'],
    [{ last: '10' }, 'last'],
    [{ version: 0, last: 1 }, 'version'],
    [{ version: 2_147_483_648, last: 1 }, 'version'],
    [{ version: '1', last: 1 }, 'version'],
    [{ last: 5, from: '2026-11-01T00:00:00Z' }, ''],
    [{ from: '2026-11-01T00:00:00Z' }, 'to'],
    [{ from: '2026-02-30', to: '2026-11-02T00:00:00Z' }, 'from'],
    [{ from: '2026-02-29T00:00:00Z', to: '2026-11-02T00:00:00Z' }, 'from'],
    [{ from: '2026-11-01T00:00:00Z', to: '2026-11-01T24:00:00Z' }, 'to'],
    [{ from: '2026-11-01 00:00:00Z', to: '2026-11-02T00:00:00Z' }, 'from'],
    [{ from: '2026-11-01T00:00:00', to: '2026-11-02T00:00:00Z' }, 'from'],
    [{ version: '01', last: 1 }, 'version'],
    [{ version: 1.5, last: 1 }, 'version'],
    [{ from: '2026-11-02T00:00:00Z', to: '2026-11-01T00:00:00Z' }, 'to'],
    [{ from: '2026-11-01T00:00:00Z', to: '2026-11-01T00:00:00Z' }, 'to'],
    [{ from: '2026-13-45T00:00:00Z', to: '2026-11-01T00:00:00Z' }, 'from'],
    [{ from: '0000-01-01T00:00:00Z', to: '2026-11-01T00:00:00Z' }, 'from'],
    [{ from: '2026-11-01T00:00:00Z', to: '9999-12-31T23:00:00-05:00' }, 'to'],
  ])('refuses %j at %j', (body, path) => {
    const check = checkReplayPlan(body);
    expect(check.ok).toBe(false);
    expect(check.ok ? [] : check.issues.map((issue) => issue.path)).toContain(path);
  });

  it('says a version must be a JSON number, not a string', () => {
    const check = checkReplayPlan({ version: '1', last: 1 });
    expect(check.ok ? [] : check.issues).toEqual([
      { path: 'version', message: 'must be a version number: a whole number from 1 to 2147483647, as a JSON number (1, not "1"), or null for the draft' },
    ]);
  });

  it('names every bad path at once', () => {
    const check = checkReplayPlan({ version: -1, last: 0 });
    expect(check.ok ? [] : check.issues.map((issue) => issue.path)).toEqual(['version', 'last']);
  });
});

describe('checkReplaySelectionQuery', () => {
  it('reads last in canonical digits, as a replay would take it', () => {
    expect(checkReplaySelectionQuery({ last: '1' })).toEqual({ ok: true, selection: { last: 1 } });
    expect(checkReplaySelectionQuery({ last: '1000' })).toEqual({ ok: true, selection: { last: 1000 } });
    for (const last of ['0', '01', '1001', '1.5', '-3', ' 5', '5 ', '1e2', '', ['5', '6']]) {
      expect(checkReplaySelectionQuery({ last })).toEqual({ ok: false, issues: [{ path: 'last', message: 'must be an integer from 1 to 1000' }] });
    }
  });

  it('reads from and to by the strict date parser, and to after from', () => {
    expect(checkReplaySelectionQuery({ from: '2026-01-01', to: '2026-01-02T12:00:00+01:00' })).toEqual({
      ok: true,
      selection: { from: '2026-01-01T00:00:00.000Z', to: '2026-01-02T11:00:00.000Z' },
    });
    const impossible = checkReplaySelectionQuery({ from: '2026-02-30', to: '2026-03-02' });
    expect(impossible.ok).toBe(false);
    expect(!impossible.ok && impossible.issues.map((issue) => issue.path)).toEqual(['from']);
    expect(checkReplaySelectionQuery({ from: '2026-01-02', to: '2026-01-01' })).toEqual({ ok: false, issues: [{ path: 'to', message: 'must be after from' }] });
    const half = checkReplaySelectionQuery({ from: '2026-01-01' });
    expect(!half.ok && half.issues.map((issue) => issue.path)).toEqual(['to']);
  });

  it('refuses both ways at once, neither, and parameters it does not know', () => {
    expect(checkReplaySelectionQuery({ last: '5', from: '2026-01-01', to: '2026-01-02' })).toEqual({
      ok: false,
      issues: [{ path: '', message: 'give either last, or from and to, not both' }],
    });
    expect(checkReplaySelectionQuery({})).toEqual({ ok: false, issues: [{ path: '', message: 'needs last, or from and to' }] });
    expect(checkReplaySelectionQuery({ lats: '5', last: '5' })).toEqual({
      ok: false,
      issues: [{ path: 'lats', message: 'is not a parameter of this request; give last, or from and to' }],
    });
  });
});

describe('answersAgree', () => {
  it('compares choice and score answers by value', () => {
    expect(answersAgree(intent, 'refund', 'refund')).toBe(true);
    expect(answersAgree(intent, 'refund', 'exchange')).toBe(false);
    expect(answersAgree(urgency, 'calm', 'calm')).toBe(true);
  });

  it('compares probabilities by the side of the threshold, 0.5 without one', () => {
    expect(answersAgree(fraud, 0.71, 0.99)).toBe(true);
    expect(answersAgree(fraud, 0.7, 0.69)).toBe(false);
    expect(answersAgree(fraud, 0.6, 0.1)).toBe(true);
    expect(answersAgree(plain, 0.6, 0.4)).toBe(false);
    expect(answersAgree(plain, 0.5, 0.9)).toBe(true);
    expect(answersAgree(plain, 'yes', 0.9)).toBe(false);
  });
});

function execution(
  oldAction: string,
  newAction: string | null,
  outcomeAction: string | null = null,
  answers = { intent: 'refund', fraud: 0.8 },
): ReplayedExecution {
  return {
    old: { action: oldAction, answers },
    new: newAction === null ? null : { action: newAction, answers },
    outcomeAction,
  };
}

describe('compareReplay', () => {
  it('counts agreement, the confusion table in action order and accuracy over labelled executions', () => {
    const comparison = compareReplay(
      [intent, fraud],
      [
        execution('continue', 'continue', 'continue'),
        execution('continue', 'block', 'block'),
        execution('continue', 'block'),
        execution('escalate', 'escalate', 'block'),
        execution('block', null, 'block'),
      ],
    );
    expect(comparison).toEqual({
      compared: 4,
      failed: 1,
      action: { agreed: 2, agreement: 0.5 },
      questions: [
        { key: 'intent', compared: 4, agreed: 4, agreement: 1 },
        { key: 'fraud', compared: 4, agreed: 4, agreement: 1 },
      ],
      confusion: {
        actions: ['continue', 'block', 'escalate'],
        counts: [
          [1, 2, 0],
          [0, 0, 0],
          [0, 0, 1],
        ],
      },
      accuracy: { labelled: 3, old: 1 / 3, new: 2 / 3 },
      reviewers: {
        executions: 0,
        action: { compared: 0, old: null, new: null },
        questions: [
          { key: 'intent', compared: 0, old: null, new: null },
          { key: 'fraud', compared: 0, old: null, new: null },
        ],
      },
    });
  });

  it('measures each side against the reviewers’ answers where a reviewer resolved the recorded run', () => {
    const reviewed = (
      oldAnswers: Record<string, string | number>,
      newAnswers: Record<string, string | number> | null,
      review: ReplayedExecution['reviewed'],
    ) => ({
      old: { action: 'escalate', answers: oldAnswers },
      new: newAnswers === null ? null : { action: 'continue', answers: newAnswers },
      outcomeAction: review?.action ?? null,
      reviewed: review,
    });
    const comparison = compareReplay(
      [intent, fraud],
      [
        // The reviewer agrees with the draft on intent and the action, with both sides on fraud.
        reviewed({ intent: 'exchange', fraud: 0.3 }, { intent: 'refund', fraud: 0.2 }, { action: 'continue', answers: { intent: 'refund', fraud: false } }),
        // With the recorded run on intent; fraud 0.75 and 0.69 fall either side of its 0.7 threshold: yes happened.
        reviewed({ intent: 'refund', fraud: 0.75 }, { intent: 'exchange', fraud: 0.69 }, { action: null, answers: { intent: 'refund', fraud: true } }),
        // Answers only for intent, and the action.
        reviewed({ intent: 'refund', fraud: 0.1 }, { intent: 'refund', fraud: 0.1 }, { action: 'escalate', answers: { intent: 'refund' } }),
        // A failed replay and an execution nobody reviewed are not counted.
        reviewed({ intent: 'refund', fraud: 0.1 }, null, { action: 'escalate', answers: { intent: 'refund' } }),
        reviewed({ intent: 'refund', fraud: 0.1 }, { intent: 'exchange', fraud: 0.1 }, null),
      ],
    );
    expect(comparison.reviewers).toEqual({
      executions: 3,
      action: { compared: 2, old: 0.5, new: 0.5 },
      questions: [
        { key: 'intent', compared: 3, old: 2 / 3, new: 2 / 3 },
        { key: 'fraud', compared: 2, old: 1, new: 0.5 },
      ],
    });
  });

  it('compares a question only where both sides kept an answer to it', () => {
    const comparison = compareReplay(
      [intent, fraud, urgency],
      [
        { old: { action: 'continue', answers: null }, new: { action: 'continue', answers: { intent: 'refund' } }, outcomeAction: null },
        {
          old: { action: 'continue', answers: { intent: 'refund', fraud: 0.9 } },
          new: { action: 'block', answers: { intent: 'exchange', fraud: 0.95 } },
          outcomeAction: null,
        },
      ],
    );
    expect(comparison.questions).toEqual([
      { key: 'intent', compared: 1, agreed: 0, agreement: 0 },
      { key: 'fraud', compared: 1, agreed: 1, agreement: 1 },
      { key: 'urgency', compared: 0, agreed: 0, agreement: null },
    ]);
  });

  it('answers null rates when nothing was compared or labelled', () => {
    const comparison = compareReplay([intent], [execution('continue', null)]);
    expect(comparison.action).toEqual({ agreed: 0, agreement: null });
    expect(comparison.accuracy).toEqual({ labelled: 0, old: null, new: null });
    expect(comparison.confusion).toEqual({ actions: [], counts: [] });
  });
});

describe('answerMatchesReview', () => {
  it('matches choice and score answers by value and a probability by the side of its threshold', () => {
    expect(answerMatchesReview(intent, 'refund', 'refund')).toBe(true);
    expect(answerMatchesReview(intent, 'refund', 'exchange')).toBe(false);
    expect(answerMatchesReview(fraud, 0.7, true)).toBe(true);
    expect(answerMatchesReview(fraud, 0.69, true)).toBe(false);
    expect(answerMatchesReview(fraud, 0.69, false)).toBe(true);
    expect(answerMatchesReview(fraud, 0.9, 'yes')).toBe(false);
    expect(answerMatchesReview(fraud, 'refund', true)).toBe(false);
  });
});

describe('replayAllowance', () => {
  it('is the plan’s cap less what the last day took, never below zero; an unknown plan has the smallest cap', () => {
    expect(replayAllowance('growth', 0)).toBe(REPLAY_DAILY_CAP.growth);
    expect(replayAllowance('developer', 4_900)).toBe(100);
    expect(replayAllowance('genesis', 5_000)).toBe(0);
    expect(replayAllowance('unknown', 0)).toBe(REPLAY_DAILY_CAP.genesis);
  });
});

import { compareShadow, nearestRank, shadowRate, shadowSampled, sharedQuestions, type ShadowPair, type ShadowSide } from './shadow';

const QUESTIONS = [
  { key: 'intent', kind: 'choice' as const },
  { key: 'fraud', kind: 'probability' as const },
];

function side(action: string, result: Record<string, unknown> | null, latency = 100, tokens = 10): ShadowSide {
  return { status: 'success', action, result, metrics: { latency_ms: latency, input_tokens: tokens, output_tokens: tokens / 2, estimated_cost_usd: 0.001 } };
}

const failed: ShadowSide = { status: 'error', action: null, result: null, metrics: null };

describe('shadowSampled', () => {
  it('samples a draw below the rate and never one at or above it', () => {
    expect(shadowSampled(1, 0)).toBe(true);
    expect(shadowSampled(1, 0.0099)).toBe(true);
    expect(shadowSampled(1, 0.01)).toBe(false);
    expect(shadowSampled(50, 0.49)).toBe(true);
    expect(shadowSampled(50, 0.5)).toBe(false);
    expect(shadowSampled(100, 0.999999)).toBe(true);
  });

  it('samples about the rate over many draws', () => {
    let sampled = 0;
    for (let i = 0; i < 10_000; i++) if (shadowSampled(25, i / 10_000)) sampled += 1;
    expect(sampled).toBe(2_500);
  });
});

describe('shadowRate', () => {
  it('takes whole percents from 1 to 100 only', () => {
    expect(shadowRate(1)).toBe(1);
    expect(shadowRate(100)).toBe(100);
    for (const bad of [0, 101, 2.5, -1, '50', null, undefined, Number.NaN, 2 ** 53]) expect(shadowRate(bad)).toBeNull();
  });
});

describe('nearestRank', () => {
  it('reads the nearest-rank percentile, null without values', () => {
    expect(nearestRank([], 50)).toBeNull();
    expect(nearestRank([7], 95)).toBe(7);
    expect(nearestRank([1, 2, 3, 4], 50)).toBe(2);
    expect(nearestRank([1, 2, 3, 4], 95)).toBe(4);
    expect(
      nearestRank(
        Array.from({ length: 100 }, (_, i) => i + 1),
        95,
      ),
    ).toBe(95);
  });
});

describe('sharedQuestions', () => {
  it('keeps the shadow’s questions the live version asks with the same kind', () => {
    expect(
      sharedQuestions(
        [
          { key: 'intent', kind: 'choice' },
          { key: 'fraud', kind: 'score' },
        ],
        [
          { key: 'fraud', kind: 'probability' },
          { key: 'new', kind: 'choice' },
          { key: 'intent', kind: 'choice' },
        ],
      ),
    ).toEqual([{ key: 'intent', kind: 'choice' }]);
  });
});

describe('compareShadow', () => {
  it('counts agreement of the action and per question, and the confusion table', () => {
    const pairs: ShadowPair[] = [
      { live: side('approve', { intent: 'refund', fraud: 0.2 }), shadow: side('approve', { intent: 'refund', fraud: 0.4 }), outcome: null },
      { live: side('approve', { intent: 'refund', fraud: 0.2 }), shadow: side('block', { intent: 'exchange', fraud: 0.7 }), outcome: null },
      { live: side('block', { intent: 'exchange', fraud: 0.9 }), shadow: side('block', { intent: 'exchange', fraud: 0.5 }), outcome: null },
      { live: side('approve', { intent: 'refund', fraud: 0.1 }), shadow: side('block', { intent: 'refund', fraud: 0.1 }), outcome: null },
    ];
    const comparison = compareShadow(QUESTIONS, pairs);
    expect(comparison.samples).toBe(4);
    expect(comparison.compared).toBe(4);
    expect(comparison.shadow_errors).toBe(0);
    expect(comparison.action).toEqual({ compared: 4, agreed: 2, rate: 0.5 });
    expect(comparison.questions).toEqual([
      { key: 'intent', compared: 4, agreed: 3, rate: 0.75 },
      // 0.2 vs 0.4 both no; 0.2 vs 0.7 differ; 0.9 vs 0.5 both yes; 0.1 vs 0.1 both no.
      { key: 'fraud', compared: 4, agreed: 3, rate: 0.75 },
    ]);
    expect(comparison.confusion).toEqual([
      { live: 'approve', shadow: 'block', count: 2 },
      { live: 'approve', shadow: 'approve', count: 1 },
      { live: 'block', shadow: 'block', count: 1 },
    ]);
  });

  it('leaves failed shadow runs out of every figure but the error count', () => {
    const comparison = compareShadow(QUESTIONS, [
      { live: side('approve', { intent: 'refund' }), shadow: failed, outcome: { answers: { intent: 'refund' }, action: 'approve' } },
      { live: side('approve', { intent: 'refund' }), shadow: side('approve', { intent: 'refund' }), outcome: null },
    ]);
    expect(comparison).toMatchObject({ samples: 2, shadow_errors: 1, compared: 1, action: { compared: 1, agreed: 1, rate: 1 } });
    expect(comparison.accuracy.action).toEqual({ labelled: 0, live: null, shadow: null });
  });

  it('compares a question only where both sides kept its answer', () => {
    const comparison = compareShadow(QUESTIONS, [
      { live: side('approve', null), shadow: side('approve', { intent: 'refund', fraud: 0.1 }), outcome: null },
      { live: side('approve', { intent: 'refund' }), shadow: side('approve', { intent: 'refund' }), outcome: null },
    ]);
    expect(comparison.action.compared).toBe(2);
    expect(comparison.questions).toEqual([
      { key: 'intent', compared: 1, agreed: 1, rate: 1 },
      { key: 'fraud', compared: 0, agreed: 0, rate: null },
    ]);
  });

  it('scores both sides against reported outcomes', () => {
    const comparison = compareShadow(QUESTIONS, [
      {
        live: side('approve', { intent: 'refund', fraud: 0.3 }),
        shadow: side('block', { intent: 'exchange', fraud: 0.8 }),
        outcome: { answers: { intent: 'exchange', fraud: true }, action: 'block' },
      },
      {
        live: side('approve', { intent: 'refund', fraud: 0.3 }),
        shadow: side('approve', { intent: 'refund', fraud: 0.6 }),
        outcome: { answers: { fraud: false }, action: null },
      },
      { live: side('approve', { intent: 'refund', fraud: 0.3 }), shadow: side('approve', { intent: 'refund', fraud: 0.3 }), outcome: null },
    ]);
    expect(comparison.accuracy.action).toEqual({ labelled: 1, live: 0, shadow: 1 });
    expect(comparison.accuracy.questions).toEqual([
      { key: 'intent', labelled: 1, live: 0, shadow: 1 },
      { key: 'fraud', labelled: 2, live: 0.5, shadow: 0.5 },
    ]);
  });

  it('puts latency, tokens and cost side by side', () => {
    const pairs: ShadowPair[] = [10, 20, 30, 40].map((ms, i) => ({
      live: side('approve', null, ms, 100),
      shadow: side('approve', null, ms * 2, 200 + i),
      outcome: null,
    }));
    const comparison = compareShadow([], pairs);
    expect(comparison.live).toEqual({ latency_ms: { p50: 20, p95: 40, mean: 25 }, input_tokens: 100, output_tokens: 50, estimated_cost_usd: 0.001 });
    expect(comparison.shadow.latency_ms).toEqual({ p50: 40, p95: 80, mean: 50 });
    expect(comparison.shadow.input_tokens).toBe(201.5);
  });

  it('answers nulls, not zeros, before any pair', () => {
    const comparison = compareShadow(QUESTIONS, []);
    expect(comparison.action).toEqual({ compared: 0, agreed: 0, rate: null });
    expect(comparison.confusion).toEqual([]);
    expect(comparison.live.latency_ms).toEqual({ p50: null, p95: null, mean: null });
    expect(comparison.live.input_tokens).toBeNull();
  });
});

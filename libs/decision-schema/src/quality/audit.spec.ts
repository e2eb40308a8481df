import { fullSchema, normalized } from '../__fixtures__/schemas';
import { AuditedCell, auditReport, ItemConfidence, wilsonInterval, Z_95 } from './audit';

describe('wilsonInterval', () => {
  // Hand computations with z = 1.96: centre = (p + z²/2n) / (1 + z²/n), half = z/(1 + z²/n) · √(p(1−p)/n + z²/4n²).
  it.each([
    // p = 0.8: centre 0.99208/1.38416 = 0.716738, half 1.416021 · √0.025604 = 0.226581
    [8, 10, 0.490157, 0.943319],
    // p = 0.5: centre 0.5, half (1.96/1.38416) · √(0.025 + 0.009604) = 1.416021 · 0.186022 = 0.263410
    [5, 10, 0.23659, 0.76341],
    // p = 0.9: z²/n = 0.038416, centre (0.9 + 0.019208)/1.038416 = 0.885202, half 1.887490 · √(0.0009 + 0.00009604) = 0.059569
    [90, 100, 0.825633, 0.944771],
    // one trial, right: centre (1 + 1.9208)/4.8416 = 0.603272, the low bound 1/(1 + z²) = 0.206543
    [1, 1, 0.206543, 1],
  ])('%i of %i with z = 1.96 is [%f, %f]', (successes, n, low, high) => {
    const interval = wilsonInterval(successes, n, 1.96)!;
    expect(interval.low).toBeCloseTo(low, 5);
    expect(interval.high).toBeCloseTo(high, 5);
  });

  it('ends exactly at 0 or 1 when none or every trial succeeded, and is never empty there', () => {
    // n / (n + z²) with n = 20: 20 / 23.8416 = 0.838870
    expect(wilsonInterval(20, 20, 1.96)).toEqual({ low: expect.closeTo(0.83887, 5) as number, high: 1 });
    expect(wilsonInterval(0, 20, 1.96)).toEqual({ low: 0, high: expect.closeTo(0.16113, 5) as number });
    for (const n of [1, 2, 5, 50, 1000]) {
      const all = wilsonInterval(n, n)!;
      expect(all.high).toBe(1);
      expect(all.low).toBeGreaterThan(0);
      expect(all.low).toBeLessThan(1);
    }
  });

  it('is the mirror of the failures, contains p, and stays within [0, 1]', () => {
    for (const n of [1, 3, 10, 37, 200]) {
      for (let successes = 0; successes <= n; successes++) {
        const interval = wilsonInterval(successes, n)!;
        const mirror = wilsonInterval(n - successes, n)!;
        expect(interval.low).toBeCloseTo(1 - mirror.high, 12);
        expect(interval.high).toBeCloseTo(1 - mirror.low, 12);
        expect(interval.low).toBeGreaterThanOrEqual(0);
        expect(interval.high).toBeLessThanOrEqual(1);
        expect(interval.low).toBeLessThanOrEqual(successes / n + 1e-12);
        expect(interval.high).toBeGreaterThanOrEqual(successes / n - 1e-12);
      }
    }
  });

  it('narrows as the sample grows and widens with z', () => {
    const width = (successes: number, n: number, z?: number) => {
      const interval = wilsonInterval(successes, n, z)!;
      return interval.high - interval.low;
    };
    expect(width(80, 100)).toBeLessThan(width(8, 10));
    expect(width(800, 1000)).toBeLessThan(width(80, 100));
    expect(width(8, 10, 2.576)).toBeGreaterThan(width(8, 10));
  });

  it('defaults to the 95 % quantile', () => {
    expect(Z_95).toBeCloseTo(1.959964, 6);
    expect(wilsonInterval(8, 10)!.low).toBeCloseTo(wilsonInterval(8, 10, Z_95)!.low, 15);
    expect(wilsonInterval(8, 10)!.low).not.toBe(wilsonInterval(8, 10, 1.96)!.low);
  });

  it('is null without trials and refuses counts that are not counts', () => {
    expect(wilsonInterval(0, 0)).toBeNull();
    expect(() => wilsonInterval(3, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(-1, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(1.5, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(1, Number.NaN)).toThrow(RangeError);
    expect(() => wilsonInterval(1, 2, 0)).toThrow(RangeError);
  });
});

describe('auditReport', () => {
  // fullSchema: intent (choice, minConfidence 0.6), urgency (score), fraud (probability).
  const review = { when: { actions: ['escalate'], lowConfidence: true, engineError: false }, auditRate: 0.1, dueMinutes: 240 };
  const schema = normalized({ ...fullSchema(), settings: { ...(fullSchema().settings as object), storeInput: true, review } });

  const cell = (
    question: string,
    kind: AuditedCell['kind'],
    step: number | null,
    count: number,
    correct: number,
    source: AuditedCell['source'] = 'model',
  ): AuditedCell => ({
    question,
    kind,
    source,
    step,
    count,
    correct,
  });
  const audit = (question: string, step: number, count: number): ItemConfidence => ({ reason: 'audit', held_by: null, question, step, count });
  const low = (question: string, step: number, count: number, heldBy = question): ItemConfidence => ({
    reason: 'low_confidence',
    held_by: heldBy,
    question,
    step,
    count,
  });

  // 200 runs: 30 escalated, 20 held back by intent's confidence, 150 automated of which 10 audited (9 resolved).
  const input = {
    runs: 200,
    items: { action: 30, low_confidence: 20, audit: 10 },
    confidences: [
      audit('intent', 19, 6),
      audit('intent', 14, 3),
      audit('intent', 12, 1),
      low('intent', 10, 15),
      low('intent', 4, 5),
      low('urgency', 10, 20, 'intent'),
    ],
    audited: [
      cell('', 'action', null, 9, 7),
      cell('intent', 'choice', 19, 5, 5),
      cell('intent', 'choice', 14, 3, 2),
      cell('intent', 'choice', 12, 1, 0),
      cell('intent', 'choice', 19, 5, 1, 'tokens'),
    ],
  };

  it('counts the automation rate, the audited action and each question from the audit samples alone', () => {
    const report = auditReport(schema, input);
    expect(report.runs).toBe(200);
    expect(report.reviewed).toEqual({ action: 30, low_confidence: 20, engine_error: 0, audit: 10 });
    expect(report.audits_resolved).toBe(9);
    // (200 − 30 − 20) / 200
    expect(report.automation_rate).toBe(0.75);
    expect(report.action).toEqual({ audited: 9, correct: 7, accuracy: 7 / 9, interval: wilsonInterval(7, 9) });
    const intent = report.questions.find((question) => question.key === 'intent')!;
    // The version answers from the model's numbers: the tokens' labels are not what it decided on.
    expect(intent).toMatchObject({ source: 'model', min_confidence: 0.6, audited: 9, correct: 7, accuracy: 7 / 9 });
    // 7 of 9 at z = 1.959964: centre 0.991192/1.426829 = 0.694682, half 1.373651 · 0.176238 = 0.242093
    expect(intent.interval!.low).toBeCloseTo(0.452589, 5);
    expect(intent.interval!.high).toBeCloseTo(0.936775, 5);
    const urgency = report.questions.find((question) => question.key === 'urgency')!;
    expect(urgency).toMatchObject({ audited: 0, correct: 0, accuracy: null, interval: null });
    expect(report.questions.map((question) => question.key)).toEqual(['intent', 'urgency', 'fraud']);
  });

  it('judges a tokens version on its token answers where they were recorded', () => {
    const tokens = normalized({ ...fullSchema(), settings: { ...(fullSchema().settings as object), storeInput: true, review, confidenceSource: 'tokens' } });
    const intent = auditReport(tokens, input).questions.find((question) => question.key === 'intent')!;
    expect(intent).toMatchObject({ source: 'tokens', audited: 5, correct: 1, accuracy: 0.2 });
    const fraud = auditReport(tokens, input).questions.find((question) => question.key === 'fraud')!;
    expect(fraud.source).toBe('model');
  });

  it('estimates per minConfidence step what would have been automated and how often it was right', () => {
    const intent = auditReport(schema, input).questions.find((question) => question.key === 'intent')!;
    expect(intent.thresholds).toHaveLength(20);
    const at = (minConfidence: number) => intent.thresholds.find((row) => Math.abs(row.min_confidence - minConfidence) < 1e-9)!;
    // At the current 0.6: every audit passes (150 automated) and no held-back run is released: 150 / 200.
    expect(at(0.6)).toMatchObject({ automation_rate: 0.75, covered: true, audited: 9, correct: 7, accuracy: 7 / 9 });
    // At 0.7: 9 of 10 audits pass, so 135 of the 150; the audits at step 12 drop out of the accuracy.
    expect(at(0.7)).toMatchObject({ automation_rate: 135 / 200, covered: true, audited: 8, correct: 7, accuracy: 7 / 8 });
    expect(at(0.7).interval).toEqual(wilsonInterval(7, 8));
    // At 0.95: 6 of 10 audits, 90 runs; 5 audited answers, all right.
    expect(at(0.95)).toMatchObject({ automation_rate: 90 / 200, audited: 5, correct: 5, accuracy: 1 });
    expect(at(0.95).interval!.high).toBe(1);
    // At 0.5: the 15 runs held back at step 10 are released, counted exactly: (150 + 15) / 200; those runs were
    // reviewed, none audited, so the audit cannot say how right they were.
    expect(at(0.5)).toMatchObject({ automation_rate: 165 / 200, covered: false, audited: 9, correct: 7, accuracy: null, interval: null });
    // At 0: all 20 released.
    expect(at(0)).toMatchObject({ automation_rate: 170 / 200, covered: false });
    // Only the question that held a run back releases it.
    const urgency = auditReport(schema, input).questions.find((question) => question.key === 'urgency')!;
    expect(urgency.thresholds.every((row) => row.automation_rate === 0.75)).toBe(true);
  });

  it('covers every step when low-confidence runs are not reviewed', () => {
    const audited = normalized({
      ...fullSchema(),
      settings: { ...(fullSchema().settings as object), storeInput: true, review: { ...review, when: { actions: ['escalate'], lowConfidence: false } } },
    });
    const intent = auditReport(audited, input).questions.find((question) => question.key === 'intent')!;
    expect(intent.thresholds.every((row) => row.covered)).toBe(true);
    expect(intent.thresholds[0]).toMatchObject({ audited: 9, accuracy: 7 / 9 });
  });

  it('counts an audit without a confidence as passing every step, and says nothing without runs or audits', () => {
    // 10 audits, 4 of them with no confidence for intent (engine-error fallbacks).
    const partial = auditReport(schema, { ...input, confidences: [audit('intent', 19, 3), audit('intent', 5, 3)] });
    const intent = partial.questions.find((question) => question.key === 'intent')!;
    // At 0.95: 4 + 3 of 10 audits pass: 150 · 0.7 = 105.
    expect(intent.thresholds[19]!.automation_rate).toBeCloseTo(105 / 200, 12);
    const none = auditReport(schema, { runs: 0, items: {}, confidences: [], audited: [] });
    expect(none.automation_rate).toBeNull();
    expect(none.action).toEqual({ audited: 0, correct: 0, accuracy: null, interval: null });
    expect(none.questions[0]!.thresholds[0]!.automation_rate).toBeNull();
    // Runs, but no audit drawn: the automated share at a step is unknown, unless nothing was automated.
    const unaudited = auditReport(schema, { runs: 10, items: { action: 4 }, confidences: [], audited: [] });
    expect(unaudited.automation_rate).toBe(0.6);
    expect(unaudited.questions[0]!.thresholds[12]!.automation_rate).toBeNull();
    const allReviewed = auditReport(schema, { runs: 4, items: { action: 4 }, confidences: [], audited: [] });
    expect(allReviewed.questions[0]!.thresholds[12]!.automation_rate).toBe(0);
  });
});

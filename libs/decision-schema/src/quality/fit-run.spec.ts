import { fullSchema, normalized } from '../__fixtures__/schemas';
import type { NormalizedSchema } from '../schema-types';
import { FIT_DAILY_CAP, FIT_LEASE_SECONDS, fitCalibration, fitDailyCap, fitRestSeconds, LabelledExecution, secondsUntilNextUtcDay } from './fit-run';
import { MIN_OUTCOMES_TO_FIT } from './fit';

// fullSchema: intent (choice: refund, exchange, other), urgency (score: calm, annoyed, furious), fraud (probability).
const version = normalized(fullSchema());

/** `n` executions where the engine said refund at 0.9 and fraud at 0.9, right every `rightEvery`-th time only. */
function executions(n: number, rightEvery = 2, withTokens = false): LabelledExecution[] {
  return Array.from({ length: n }, (_, i) => {
    const right = i % rightEvery === 0;
    const intent = { refund: 0.9, exchange: 0.1, other: 0 };
    return {
      distributions: { model: { intent, fraud: { yes: 0.9, no: 0.1 } }, ...(withTokens ? { tokens: { intent } } : {}) },
      answers: { intent: right ? 'refund' : 'exchange', fraud: right },
    };
  });
}

describe('fit caps', () => {
  it('grow with the plan, and an unknown plan gets the free plan’s', () => {
    expect(fitDailyCap('genesis')).toBe(20);
    expect(fitDailyCap('developer')).toBeGreaterThan(fitDailyCap('genesis'));
    expect(fitDailyCap('growth')).toBeGreaterThan(fitDailyCap('developer'));
    expect(fitDailyCap('enterprise')).toBeGreaterThan(fitDailyCap('growth'));
    expect(fitDailyCap('no-such-plan')).toBe(FIT_DAILY_CAP.genesis);
    expect(fitDailyCap('__proto__')).toBe(FIT_DAILY_CAP.genesis);
  });

  it('start again at the next UTC midnight: between 1 second and a day away', () => {
    expect(secondsUntilNextUtcDay(new Date('2026-05-01T00:00:00.000Z'))).toBe(86_400);
    expect(secondsUntilNextUtcDay(new Date('2026-05-01T23:00:00.000Z'))).toBe(3_600);
    expect(secondsUntilNextUtcDay(new Date('2026-05-01T23:59:59.999Z'))).toBe(1);
    expect(secondsUntilNextUtcDay(new Date('2026-05-01T12:00:00.500Z'))).toBe(43_200);
  });
});

describe('fit rest', () => {
  it('is four times the fit, in whole seconds rounded up, at least a second and at most the lease', () => {
    expect(fitRestSeconds(600)).toBe(3);
    expect(fitRestSeconds(250)).toBe(1);
    expect(fitRestSeconds(251)).toBe(2);
    expect(fitRestSeconds(0)).toBe(1);
    expect(fitRestSeconds(-5)).toBe(1);
    expect(fitRestSeconds(10_000)).toBe(40);
    expect(fitRestSeconds(3_600_000)).toBe(FIT_LEASE_SECONDS);
  });
});

describe('fitCalibration', () => {
  it('fits each question with enough outcomes into a copy of the draft’s calibration and lists the rest', () => {
    const draft: NormalizedSchema = { ...version, calibration: { model: { urgency: { method: 'temperature', temperature: 2 } } } };
    const fit = fitCalibration(version, draft, executions(200));
    expect(fit.fitted.map((question) => `${question.question}/${question.source}`)).toEqual(['intent/model', 'fraud/model']);
    for (const question of fit.fitted) {
      expect(question.outcomes).toBe(200);
      expect(question.ece_before).toBeCloseTo(0.4, 6);
      expect(question.ece_after).toBeLessThan(0.1);
      expect(question).not.toHaveProperty('status');
    }
    expect(fit.not_fitted).toEqual([{ question: 'urgency', source: 'model', outcomes: 0, reason: 'not_enough_outcomes', needed: MIN_OUTCOMES_TO_FIT }]);
    expect(Object.keys(fit.calibration.model!).sort()).toEqual(['fraud', 'intent', 'urgency']);
    // The draft's own calibration object is left as it was.
    expect(Object.keys(draft.calibration!.model!)).toEqual(['urgency']);
  });

  it('lists a question the draft changed instead of fitting a map it could not use', () => {
    const draft = normalized({
      ...fullSchema(),
      questions: (fullSchema().questions as Array<Record<string, unknown>>).map((question) =>
        question.key === 'intent' ? { ...question, options: [{ value: 'refund' }, { value: 'repair' }] } : question,
      ),
    });
    const fit = fitCalibration(version, draft, executions(100));
    expect(fit.fitted.map((question) => question.question)).toEqual(['fraud']);
    expect(fit.not_fitted).toContainEqual({ question: 'intent', source: 'model', outcomes: 100, reason: 'changed_in_draft' });
    expect(fit.calibration.model?.intent).toBeUndefined();
  });

  it('reads token probabilities for choice and score questions only, and only where some execution recorded them', () => {
    expect(fitCalibration(version, version, executions(50)).not_fitted.some((entry) => entry.source === 'tokens')).toBe(false);
    const fit = fitCalibration(version, version, executions(50, 2, true));
    expect(fit.fitted.map((question) => `${question.question}/${question.source}`)).toEqual(['intent/model', 'fraud/model', 'intent/tokens']);
    expect(fit.not_fitted.filter((entry) => entry.source === 'tokens').map((entry) => entry.question)).toEqual(['urgency']);
  });

  it('skips executions without an answer for the question, without its distribution, or with a value it does not know', () => {
    const rows: LabelledExecution[] = [
      ...executions(MIN_OUTCOMES_TO_FIT - 1),
      { distributions: { model: { intent: { refund: 0.9, exchange: 0.1, other: 0 } } }, answers: null },
      { distributions: { model: {} }, answers: { intent: 'refund' } },
      { distributions: { model: { intent: { refund: 0.9, exchange: 0.1, other: 0 } } }, answers: { intent: 'nonsense' } },
    ];
    const fit = fitCalibration(version, version, rows);
    expect(fit.fitted).toEqual([]);
    expect(fit.not_fitted.find((entry) => entry.question === 'intent')).toMatchObject({ outcomes: MIN_OUTCOMES_TO_FIT - 1, reason: 'not_enough_outcomes' });
  });
});

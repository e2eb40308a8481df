import { fullSchema, normalized } from '../__fixtures__/schemas';
import { binOf, stepOf } from './bins';
import { outcomeLabels, QualityLabel } from './labels';
import { QualityCell, qualityReport } from './report';

// fullSchema: intent (choice, minConfidence 0.6), urgency (score), fraud (probability).
const schema = normalized(fullSchema());

/** What the report's SQL computes, in memory: the labels grouped by question, kind, source, bin and step. */
function cellsOf(labels: QualityLabel[]): QualityCell[] {
  const cells = new Map<string, QualityCell>();
  for (const label of labels) {
    const bin = label.predicted === null ? null : binOf(label.predicted);
    const step = label.confidence === null ? null : stepOf(label.confidence);
    const key = [label.question, label.kind, label.source, bin, step].join('|');
    const cell = cells.get(key) ?? {
      question: label.question,
      kind: label.kind,
      source: label.source,
      bin,
      step,
      count: 0,
      predicted: 0,
      observed: 0,
      correct: 0,
      brier: 0,
      log_loss: 0,
    };
    cell.count++;
    cell.predicted += label.predicted ?? 0;
    cell.observed += label.observed ? 1 : 0;
    cell.correct += label.correct ? 1 : 0;
    if (label.kind === 'probability') {
      const y = label.observed ? 1 : 0;
      const p = label.predicted!;
      cell.brier += (p - y) ** 2;
      cell.log_loss -= y * Math.log(p) + (1 - y) * Math.log(1 - p);
    }
    cells.set(key, cell);
  }
  return [...cells.values()];
}

const distributions = (refund: number, yes: number) => ({
  intent: { refund, exchange: 1 - refund, other: 0 },
  urgency: { calm: 1, annoyed: 0, furious: 0 },
  fraud: { yes, no: 1 - yes },
});

describe('qualityReport', () => {
  it('lists every question with zero labels and no rates when nothing is labelled', () => {
    const report = qualityReport(schema, []);
    expect(report.questions.map((q) => [q.key, q.kind, q.labelled, q.min_confidence])).toEqual([
      ['intent', 'choice', 0, 0.6],
      ['urgency', 'score', 0, null],
      ['fraud', 'probability', 0, null],
    ]);
    expect(report.questions[0]!.sources).toEqual({ model: expect.objectContaining({ labelled: 0, accuracy: null, ece: null, brier: null, log_loss: null }) });
    expect(report.questions[2]!.sources.model).toMatchObject({ brier: null, log_loss: null });
    expect(report.action).toEqual({ labelled: 0, agreement: null });
  });

  it('computes accuracy, ECE, Brier, log loss, bins, thresholds and action agreement from the cells', () => {
    const labels = [
      ...outcomeLabels(schema, { model: distributions(0.9, 0.9) }, { answers: { intent: 'refund', fraud: true }, action: 'continue' }, 'continue'),
      ...outcomeLabels(schema, { model: distributions(0.9, 0.9) }, { answers: { intent: 'exchange', fraud: false }, action: 'block' }, 'continue'),
      ...outcomeLabels(schema, { model: distributions(0.6, 0.2) }, { answers: { intent: 'refund', fraud: false }, action: 'continue' }, 'continue'),
      ...outcomeLabels(
        schema,
        { model: distributions(0.6, 0.2), tokens: distributions(0.95, 0.5) },
        { answers: { intent: 'refund', fraud: true }, action: null },
        'continue',
      ),
    ];
    const report = qualityReport(schema, cellsOf(labels));
    const [intent, urgency, fraud] = report.questions;
    expect(urgency!.labelled).toBe(0);
    expect(intent!.labelled).toBe(4);
    const model = intent!.sources.model!;
    expect(model.accuracy).toBe(0.75);
    // Bin 9: two at 0.9, one right; bin 6: two at 0.6, both right. ECE = (2·0.4 + 2·0.4) / 4.
    expect(model.bins[9]).toMatchObject({ count: 2, confidence: 0.9, accuracy: 0.5 });
    expect(model.bins[6]).toMatchObject({ count: 2, confidence: 0.6, accuracy: 1 });
    expect(model.ece).toBeCloseTo(0.4, 12);
    expect(model.brier).toBeNull();
    expect(model.thresholds[0]).toMatchObject({ kept: 4, coverage: 1, accuracy: 0.75 });

    const yes = fraud!.sources.model!;
    expect(yes.accuracy).toBeNull();
    expect(yes.brier).toBeCloseTo((0.01 + 0.81 + 0.04 + 0.64) / 4, 12);
    expect(yes.log_loss).toBeCloseTo(-(Math.log(0.9) + Math.log(0.1) + Math.log(0.8) + Math.log(0.2)) / 4, 12);
    // Confidence |2p − 1|: 0.8 twice, 0.6 twice; the minConfidence 0.65 keeps the two at 0.8, one of them right.
    expect(yes.thresholds[13]).toMatchObject({ min_confidence: 0.65, kept: 2, coverage: 0.5, accuracy: 0.5 });

    expect(fraud!.sources.tokens).toMatchObject({ labelled: 1 });
    expect(intent!.sources.tokens).toMatchObject({ labelled: 1, accuracy: 1 });
    expect(urgency!.sources.tokens).toBeUndefined();
    expect(report.action).toEqual({ labelled: 3, agreement: 2 / 3 });
  });
});

import { deterministicDistribution, estimateTokens, reportedModel } from './deterministic';

const intent = { key: 'intent', outcomes: ['refund', 'exchange', 'other'] };

function sum(distribution: Record<string, number>): number {
  return Object.values(distribution).reduce((a, b) => a + b, 0);
}

describe('deterministicDistribution', () => {
  it('gives the same distribution for the same seed and question', () => {
    expect(deterministicDistribution('seed', intent)).toEqual(deterministicDistribution('seed', intent));
  });

  it('covers every outcome in schema order, sums to 1 and has a clear winner', () => {
    for (let i = 0; i < 500; i++) {
      const outcomes = Array.from({ length: 1 + (i % 12) }, (_, j) => `o${j}`);
      const distribution = deterministicDistribution(`seed ${i}`, { key: 'q', outcomes });
      expect(Object.keys(distribution)).toEqual(outcomes);
      expect(sum(distribution)).toBeCloseTo(1, 9);
      for (const p of Object.values(distribution)) expect(p).toBeGreaterThanOrEqual(0);
      const top = Math.max(...Object.values(distribution));
      expect(top).toBeGreaterThanOrEqual(outcomes.length === 1 ? 1 : 0.55);
      expect(top).toBeLessThanOrEqual(outcomes.length === 1 ? 1 : 0.9);
    }
  });

  it('depends on the seed and on the question key', () => {
    const winners = new Set<string>();
    const majorities = new Set<number>();
    for (let i = 0; i < 60; i++) {
      const distribution = deterministicDistribution(`seed ${i}`, intent);
      // intent has three outcomes, so the distribution has entries.
      const [winner, p] = Object.entries(distribution).sort((a, b) => b[1] - a[1])[0]!;
      winners.add(winner);
      majorities.add(p);
    }
    expect(winners).toEqual(new Set(intent.outcomes));
    expect(majorities.size).toBeGreaterThan(20);
    expect(deterministicDistribution('seed', intent)).not.toEqual(deterministicDistribution('seed', { ...intent, key: 'intent2' }));
  });

  it('writes probabilities as whole thousandths', () => {
    for (const p of Object.values(deterministicDistribution('seed', intent))) {
      expect(Math.round(p * 1000) / 1000).toBe(p);
    }
  });
});

describe('reportedModel', () => {
  it.each([
    ['sim-standard', 'sim-standard-2026-11-01'],
    ['sim-standard-2025-01-31', 'sim-standard-2025-01-31'],
    ['claude-x-20250101', 'claude-x-20250101-2026-11-01'],
    ['gpt-4o-2024-8-06', 'gpt-4o-2024-8-06-2026-11-01'],
  ])('reports %s as %s', (requested, reported) => {
    expect(reportedModel(requested)).toBe(reported);
  });
});

describe('estimateTokens', () => {
  it.each([
    [0, 0],
    [1, 1],
    [4, 1],
    [5, 2],
    [401, 101],
  ])('%i characters are %i tokens', (characters, tokens) => {
    expect(estimateTokens(characters)).toBe(tokens);
  });
});

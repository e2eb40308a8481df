import { fullSchema, normalized } from './__fixtures__/schemas';
import { checkDistributions } from './distributions';

const schema = normalized(fullSchema()); // intent: refund, exchange, other; urgency: calm, annoyed, furious; fraud: yes, no

const valid = () => ({
  intent: { refund: 0.7, exchange: 0.2, other: 0.1 },
  urgency: { calm: 0.5, annoyed: 0.25, furious: 0.25 },
  fraud: { yes: 0.1, no: 0.9 },
});

describe('checkDistributions', () => {
  it('accepts one distribution per question over its outcomes, listed in outcome order', () => {
    const result = checkDistributions(schema, { fraud: { no: 0.9, yes: 0.1 }, urgency: valid().urgency, intent: valid().intent });
    expect(result).toEqual({ ok: true, normalized: valid() });
    if (result.ok) {
      expect(Object.keys(result.normalized)).toEqual(['intent', 'urgency', 'fraud']);
      expect(Object.keys(result.normalized.fraud ?? {})).toEqual(['yes', 'no']);
    }
  });

  it('counts missing outcomes as 0 and rescales to a sum of 1', () => {
    const result = checkDistributions(schema, { ...valid(), intent: { exchange: 3, other: 1 }, fraud: { yes: 0.5 } });
    expect(result).toEqual({
      ok: true,
      normalized: { ...valid(), intent: { refund: 0, exchange: 0.75, other: 0.25 }, fraud: { yes: 1, no: 0 } },
    });
  });

  it.each([
    [null, 'the distributions must be an object keyed by question'],
    [[], 'the distributions must be an object keyed by question'],
    [{ ...valid(), mood: { happy: 1 } }, 'unknown question "mood"'],
    [{ intent: valid().intent, fraud: valid().fraud }, 'missing the distribution of "urgency"'],
    [{ ...valid(), urgency: [0.5, 0.5] }, 'the distribution of "urgency" must be an object'],
    [{ ...valid(), intent: { refund: 0.5, cancel: 0.5 } }, 'unknown outcome "cancel" for "intent"'],
    [{ ...valid(), fraud: { yes: -0.1, no: 1.1 } }, 'the probability of "yes" for "fraud" must be a number of at least 0'],
    [{ ...valid(), fraud: { yes: Number.NaN, no: 1 } }, 'the probability of "yes" for "fraud" must be a number of at least 0'],
    [{ ...valid(), fraud: { yes: Number.POSITIVE_INFINITY } }, 'the probability of "yes" for "fraud" must be a number of at least 0'],
    [{ ...valid(), fraud: { yes: '0.5' } }, 'the probability of "yes" for "fraud" must be a number of at least 0'],
    [{ ...valid(), fraud: { yes: 0, no: 0 } }, 'the probabilities for "fraud" must sum to a positive number'],
    [{ ...valid(), fraud: {} }, 'the probabilities for "fraud" must sum to a positive number'],
    [{ ...valid(), fraud: { yes: Number.MAX_VALUE, no: Number.MAX_VALUE } }, 'the probabilities for "fraud" must sum to a positive number'],
  ])('refuses %p', (distributions, message) => {
    expect(checkDistributions(schema, distributions)).toEqual({ ok: false, message });
  });

  it('reads only own properties', () => {
    const withConstructor = normalized({
      ...fullSchema(),
      questions: [{ key: 'constructor', kind: 'probability', instructions: 'x', criterion: 'y' }],
      composites: [],
      policies: [],
      destinations: [],
    });
    expect(checkDistributions(withConstructor, {})).toEqual({ ok: false, message: 'missing the distribution of "constructor"' });
  });

  it('handles level labels that are Object.prototype names as ordinary outcomes', () => {
    const odd = normalized({
      ...fullSchema(),
      questions: [{ key: 'q', kind: 'score', instructions: 'x', levels: ['__proto__', 'toString'] }],
      composites: [],
      policies: [],
      destinations: [],
    });
    const result = checkDistributions(odd, JSON.parse('{"q":{"__proto__":3,"toString":1}}'));
    expect(result.ok && Object.entries(result.normalized.q ?? {})).toEqual([
      ['__proto__', 0.75],
      ['toString', 0.25],
    ]);
  });
});

describe('checkDistributions rounding', () => {
  it('keeps numbers that sum to 1 up to rounding as they are', () => {
    const result = checkDistributions(schema, { ...valid(), intent: { refund: 0.7, exchange: 0.2, other: 0.1 } });
    expect(result.ok && result.normalized.intent).toEqual({ refund: 0.7, exchange: 0.2, other: 0.1 });
  });

  it('rescales a sum above 1, however slightly, so no probability passes 1', () => {
    const result = checkDistributions(schema, { ...valid(), fraud: { yes: 1 + 1e-12, no: 0 } });
    expect(result.ok && result.normalized.fraud).toEqual({ yes: 1, no: 0 });
  });
});

import { DEFAULT_PRICES, modelLabel } from './prices';

describe('the model label of the engine metrics', () => {
  it('names a model of the price table, exactly or by its longest known prefix', () => {
    expect(modelLabel(DEFAULT_PRICES, 'gpt-4o')).toBe('gpt-4o');
    expect(modelLabel(DEFAULT_PRICES, 'gpt-4o-mini-2024-07-18')).toBe('gpt-4o-mini');
    expect(modelLabel(DEFAULT_PRICES, 'claude-sonnet-4-20250514')).toBe('claude-sonnet-4');
    expect(modelLabel(DEFAULT_PRICES, 'sim-standard')).toBe('sim-');
  });

  it('reads any other name as other, so that decisions cannot add label values', () => {
    expect(modelLabel(DEFAULT_PRICES, 'my-fine-tune-7b')).toBe('other');
    expect(modelLabel(DEFAULT_PRICES, 'constructor')).toBe('other');
    expect(modelLabel(DEFAULT_PRICES, '')).toBe('other');
    expect(modelLabel({ ...DEFAULT_PRICES, 'llama-3': 0 }, 'llama-3-70b')).toBe('llama-3');
  });
});

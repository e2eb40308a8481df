import { destinationEntries } from './destination-entries';
import type { DestinationMatch } from './destinations';
import type { NormalizedDestination } from './schema-types';

const common = { description: null, when: [], params: {}, headers: {} };
const match = (destination: Partial<NormalizedDestination> & { key: string; type: NormalizedDestination['type'] }, params: Record<string, unknown> = {}, skipped?: DestinationMatch['skipped']): DestinationMatch =>
  ({ destination: { ...common, ...destination } as NormalizedDestination, params, ...(skipped ? { skipped } : {}) });

describe('destinationEntries', () => {
  it('renders replies with their params and buttons, without a status', () => {
    expect(destinationEntries([match({ key: 'sorry', type: 'reply', text: 'Sorry, {{params.name}}.', buttons: ['Track'] } as never, { name: 'Ana' })])).toEqual([
      { key: 'sorry', type: 'reply', text: 'Sorry, Ana.', buttons: ['Track'] },
    ]);
    expect(destinationEntries([match({ key: 'plain', type: 'reply', text: 'Hi', buttons: [] } as never)])).toEqual([{ key: 'plain', type: 'reply', text: 'Hi' }]);
  });

  it('returns functions with their handler name and params', () => {
    expect(destinationEntries([match({ key: 'refund', type: 'function', function: 'issueRefund' } as never, { amount: 12 })])).toEqual([
      { key: 'refund', type: 'function', function: 'issueRefund', params: { amount: 12 } },
    ]);
  });

  it('keeps the skip reason and the missing param', () => {
    expect(destinationEntries([match({ key: 'r', type: 'reply', text: 'x', buttons: [] } as never, {}, { reason: 'missing_param', param: 'name' })])).toEqual([
      { key: 'r', type: 'reply', status: 'skipped', reason: 'missing_param', param: 'name' },
    ]);
    expect(destinationEntries([match({ key: 'f', type: 'function', function: 'f' } as never, {}, { reason: 'limit' })])).toEqual([
      { key: 'f', type: 'function', status: 'skipped', reason: 'limit' },
    ]);
  });

  it.each(['llm', 'agent', 'workflow', 'webhook', 'http'] as const)('reports %s as unavailable rather than claiming a call', (type) => {
    expect(destinationEntries([match({ key: 'out', type, url: 'https://example.com' } as never)])).toEqual([{ key: 'out', type, status: 'skipped', reason: 'unavailable' }]);
  });

  it('keeps schema order', () => {
    const entries = destinationEntries([match({ key: 'b', type: 'function', function: 'b' } as never), match({ key: 'a', type: 'function', function: 'a' } as never)]);
    expect(entries.map((e) => e.key)).toEqual(['b', 'a']);
  });
});

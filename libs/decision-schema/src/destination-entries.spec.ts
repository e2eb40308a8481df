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

  it('skips with reason limit a reply whose rendered text passes 4,000 characters, and keeps one at the limit', () => {
    const reply = { key: 'echo', type: 'reply', text: '{{params.big}}'.repeat(200), buttons: [] } as never;
    expect(destinationEntries([match(reply, { big: 'x'.repeat(1_000) })])).toEqual([{ key: 'echo', type: 'reply', status: 'skipped', reason: 'limit' }]);
    expect(destinationEntries([match(reply, { big: 'x'.repeat(20) })])).toEqual([{ key: 'echo', type: 'reply', text: 'x'.repeat(4_000) }]);
  });

  it('skips with reason limit a function whose params serialize past 16,000 characters, and keeps one at the limit', () => {
    const fn = { key: 'sync', type: 'function', function: 'sync' } as never;
    const atLimit = { a: 'x'.repeat(16_000 - '{"a":""}'.length) };
    expect(JSON.stringify(atLimit)).toHaveLength(16_000);
    expect(destinationEntries([match(fn, atLimit)])).toEqual([{ key: 'sync', type: 'function', function: 'sync', params: atLimit }]);
    expect(destinationEntries([match(fn, { a: `${atLimit.a}x` })])).toEqual([{ key: 'sync', type: 'function', status: 'skipped', reason: 'limit' }]);
    expect(destinationEntries([match(fn, { a: 'x'.repeat(9_000), b: 'y'.repeat(9_000) })])).toEqual([{ key: 'sync', type: 'function', status: 'skipped', reason: 'limit' }]);
  });

  it('keeps schema order', () => {
    const entries = destinationEntries([match({ key: 'b', type: 'function', function: 'b' } as never), match({ key: 'a', type: 'function', function: 'a' } as never)]);
    expect(entries.map((e) => e.key)).toEqual(['b', 'a']);
  });
});

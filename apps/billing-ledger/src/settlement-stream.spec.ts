import { parseSettlements } from './settlement-stream';

const encode = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
const one = { workspaceId: 'ws_1', executionId: 'exec_1', billable: true };

describe('parseSettlements', () => {
  it('reads a single settlement and a runner’s batch, keeping a lease id for the ledger to check', () => {
    expect(parseSettlements(encode(one))).toEqual([one]);
    const leased = { workspaceId: 'ws_2', executionId: 'exec_2', billable: false, leaseId: 'lease_x' };
    expect(parseSettlements(encode({ settlements: [one, leased] }))).toEqual([one, leased]);
  });

  it('keeps the decision a settlement names, and reads one published before it was carried', () => {
    const named = { ...one, decisionId: 'dec_1' };
    expect(parseSettlements(encode({ settlements: [named, one] }))).toEqual([named, one]);
  });

  it('drops what a settlement does not carry', () => {
    expect(parseSettlements(encode({ ...one, extra: 'ignored' }))).toEqual([one]);
  });

  it('refuses what is not settlements: bad JSON, wrong types, an empty batch, or a batch with one bad item', () => {
    expect(parseSettlements(encode('{not json'))).toBeNull();
    expect(parseSettlements(encode(null))).toBeNull();
    expect(parseSettlements(encode({ ...one, billable: 'yes' }))).toBeNull();
    expect(parseSettlements(encode({ workspaceId: 'ws_1', billable: true }))).toBeNull();
    expect(parseSettlements(encode({ settlements: [] }))).toBeNull();
    expect(parseSettlements(encode({ settlements: [one, { executionId: 'exec_3' }] }))).toBeNull();
    expect(parseSettlements(encode({ settlements: 'all' }))).toBeNull();
  });
});

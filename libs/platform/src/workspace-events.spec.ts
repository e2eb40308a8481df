import { parseWorkspaceEvent } from './workspace-events';

const encoded = (value: unknown) => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));

describe('parseWorkspaceEvent', () => {
  it("reads a partner's sub-workspace deletion and an Owner's deletion of their workspace", () => {
    expect(parseWorkspaceEvent(encoded({ workspaceId: 'w1', partnerWorkspaceId: 'p1', deletedAt: '2026-11-26T00:00:00.000Z' }))).toEqual({
      workspaceId: 'w1',
      partnerWorkspaceId: 'p1',
      deletedAt: '2026-11-26T00:00:00.000Z',
    });
    expect(parseWorkspaceEvent(encoded({ workspaceId: 'w2', partnerWorkspaceId: null, deletedAt: '2026-11-26T00:00:00.000Z' }))).toEqual({
      workspaceId: 'w2',
      partnerWorkspaceId: null,
      deletedAt: '2026-11-26T00:00:00.000Z',
    });
  });

  it.each([
    ['not JSON', '{'],
    ['null', 'null'],
    ['no workspace id', { partnerWorkspaceId: 'p1' }],
    ['a numeric workspace id', { workspaceId: 7, partnerWorkspaceId: 'p1' }],
    ['no partner field at all', { workspaceId: 'w1' }],
    ['a numeric partner id', { workspaceId: 'w1', partnerWorkspaceId: 3 }],
  ])('drops %s', (_, value) => {
    expect(parseWorkspaceEvent(encoded(value))).toBeNull();
  });
});

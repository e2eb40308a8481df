import { screenKey } from './screen-key';

describe('screenKey', () => {
  it('makes one screen of a decision and its tabs, and another of each other path', () => {
    expect(screenKey('/decisions/dec_1')).toBe('/decisions/dec_1');
    expect(screenKey('/decisions/dec_1/editor')).toBe('/decisions/dec_1');
    expect(screenKey('/decisions/support-triage/deploy')).toBe('/decisions/support-triage');
    expect(screenKey('/decisions/dec_2/editor')).not.toBe(screenKey('/decisions/dec_1/editor'));
    expect(screenKey('/decisions/new')).toBe('/decisions/new');
    expect(screenKey('/decisions')).toBe('/decisions');
    expect(screenKey('/invitations/accept')).toBe('/invitations/accept');
    expect(screenKey('/executions/exec_1')).toBe('/executions/exec_1');
  });
});

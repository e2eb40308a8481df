import { translate } from './i18n';
import { planLabel } from './plans';

describe('planLabel', () => {
  const t = (key: Parameters<typeof translate>[1]) => translate('en', key);
  it('names the four plans, saying which is free', () => {
    expect(['genesis', 'developer', 'growth', 'enterprise'].map((plan) => planLabel(plan, t))).toEqual(['Genesis (free)', 'Developer', 'Growth', 'Enterprise']);
  });
  it('capitalizes a plan it does not know', () => {
    expect(planLabel('partner_custom', t)).toBe('Partner_custom');
  });
});

import { CreditGrant, effectiveRetentionDays, expiryIssues, sameGrant } from './billing-inputs';

describe('credit grants', () => {
  it('compares grants field by field', () => {
    const grant: CreditGrant = { kind: 'promotional', amountCents: 500, currency: 'usd', expiresAt: new Date('2026-06-01T00:00:00Z') };
    expect(sameGrant(grant, { ...grant, expiresAt: new Date('2026-06-01T00:00:00.000Z') })).toBe(true);
    expect(sameGrant(grant, { ...grant, amountCents: 501 })).toBe(false);
    expect(sameGrant(grant, { ...grant, expiresAt: null })).toBe(false);
    expect(sameGrant(grant, { ...grant, currency: 'brl' })).toBe(false);
  });

  it('wants a new grant to expire in the future', () => {
    const grant = { kind: 'promotional' as const, amountCents: 1, currency: 'usd' as const, expiresAt: new Date('2026-01-01T00:00:00Z') };
    expect(expiryIssues(grant, new Date('2025-12-31T23:59:59Z'))).toEqual([]);
    expect(expiryIssues(grant, new Date('2026-01-01T00:00:00Z'))).toEqual([{ path: 'expires_at', message: 'must be in the future' }]);
    expect(expiryIssues({ ...grant, expiresAt: null }, new Date())).toEqual([]);
  });
});

describe('effectiveRetentionDays', () => {
  it('is the plan’s without a setting, the setting when shorter, and the plan’s when the plan is shorter', () => {
    expect(effectiveRetentionDays(30, null)).toBe(30);
    expect(effectiveRetentionDays(30, 3)).toBe(3);
    expect(effectiveRetentionDays(7, 30)).toBe(7);
    expect(effectiveRetentionDays(7, 7)).toBe(7);
  });
});

import { effectiveRetentionDays, expiryIssues, MAX_GRANT_CENTS, parseGrant, parseRetentionSetting, parseSpendCap, sameGrant } from './billing-inputs';

describe('parseGrant', () => {
  const valid = { kind: 'promotional', amount_cents: 500, currency: 'usd', expires_at: '2026-06-01T00:00:00Z' };

  it('accepts a promotional grant with an expiry and a paid one without', () => {
    expect(parseGrant(valid)).toEqual({
      ok: true,
      value: { kind: 'promotional', amountCents: 500, currency: 'usd', expiresAt: new Date('2026-06-01T00:00:00Z') },
    });
    expect(parseGrant({ kind: 'paid', amount_cents: MAX_GRANT_CENTS, currency: 'brl', expires_at: undefined })).toEqual({
      ok: true,
      value: { kind: 'paid', amountCents: MAX_GRANT_CENTS, currency: 'brl', expiresAt: null },
    });
    expect(parseGrant({ ...valid, expires_at: null })).toMatchObject({ ok: true, value: { expiresAt: null } });
    expect(parseGrant({ ...valid, expires_at: '2028-02-29' })).toMatchObject({ ok: true, value: { expiresAt: new Date('2028-02-29T00:00:00Z') } });
    expect(parseGrant({ ...valid, expires_at: '2026-06-01T00:00:00.123+02:00' })).toMatchObject({
      ok: true,
      value: { expiresAt: new Date('2026-05-31T22:00:00.123Z') },
    });
  });

  it('reports every problem', () => {
    expect(parseGrant({ kind: 'gift', amount_cents: 0, currency: 'eur', expires_at: 'tomorrow' })).toEqual({
      ok: false,
      issues: [
        { path: 'kind', message: 'must be one of promotional, paid' },
        { path: 'amount_cents', message: `must be an integer from 1 to ${MAX_GRANT_CENTS}` },
        { path: 'currency', message: 'must be one of usd, brl' },
        { path: 'expires_at', message: 'must be an ISO 8601 date such as 2026-05-01 or a timestamp with a time zone such as 2026-05-01T12:00:00Z' },
      ],
    });
    for (const amount_cents of [1.5, '5', MAX_GRANT_CENTS + 1, -3, null])
      expect(parseGrant({ ...valid, amount_cents })).toMatchObject({ ok: false, issues: [{ path: 'amount_cents' }] });
    for (const expires_at of ['2026-06-01T00:00:00', '2026-13-01T00:00:00Z', '2026-02-31T00:00:00Z', '2026-06-01T24:00:00Z', '2026-06-01 00:00:00Z', 5])
      expect(parseGrant({ ...valid, expires_at })).toMatchObject({ ok: false, issues: [{ path: 'expires_at' }] });
  });

  it('refuses an expiry on paid credits', () => {
    expect(parseGrant({ ...valid, kind: 'paid' })).toEqual({ ok: false, issues: [{ path: 'expires_at', message: expect.stringContaining('never expire') }] });
  });

  it('compares grants field by field', () => {
    const grant = parseGrant(valid);
    if (!grant.ok) throw new Error('valid grant refused');
    expect(sameGrant(grant.value, { ...grant.value, expiresAt: new Date('2026-06-01T00:00:00.000Z') })).toBe(true);
    expect(sameGrant(grant.value, { ...grant.value, amountCents: 501 })).toBe(false);
    expect(sameGrant(grant.value, { ...grant.value, expiresAt: null })).toBe(false);
    expect(sameGrant(grant.value, { ...grant.value, currency: 'brl' })).toBe(false);
  });

  it('wants a new grant to expire in the future', () => {
    const grant = { kind: 'promotional' as const, amountCents: 1, currency: 'usd' as const, expiresAt: new Date('2026-01-01T00:00:00Z') };
    expect(expiryIssues(grant, new Date('2025-12-31T23:59:59Z'))).toEqual([]);
    expect(expiryIssues(grant, new Date('2026-01-01T00:00:00Z'))).toEqual([{ path: 'expires_at', message: 'must be in the future' }]);
    expect(expiryIssues({ ...grant, expiresAt: null }, new Date())).toEqual([]);
  });
});

describe('parseSpendCap', () => {
  it('takes whole cents, 0 included, or null for no cap', () => {
    expect(parseSpendCap(0)).toEqual({ ok: true, value: 0 });
    expect(parseSpendCap(12_345)).toEqual({ ok: true, value: 12_345 });
    expect(parseSpendCap(null)).toEqual({ ok: true, value: null });
    for (const bad of [-1, 1.5, '100', undefined, Number.MAX_SAFE_INTEGER + 1]) {
      expect(parseSpendCap(bad)).toEqual({ ok: false, issues: [{ path: 'spend_cap_cents', message: expect.any(String) }] });
    }
  });
});

describe('parseRetentionSetting', () => {
  it('accepts whole days from 1 to the plan’s retention, and null for the plan’s', () => {
    expect(parseRetentionSetting(1, 7)).toEqual({ ok: true, value: 1 });
    expect(parseRetentionSetting(7, 7)).toEqual({ ok: true, value: 7 });
    expect(parseRetentionSetting(null, 7)).toEqual({ ok: true, value: null });
  });

  it.each([0, -1, 8, 365, 1.5, '3', undefined, true, Number.NaN, Number.POSITIVE_INFINITY, {}])('refuses %p on a 7-day plan', (value) => {
    expect(parseRetentionSetting(value, 7)).toEqual({
      ok: false,
      issues: [{ path: 'days', message: "must be a whole number of days from 1 to 7 (the plan's retention), or null for the plan's" }],
    });
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

import { ServiceError } from '../errors';
import { CREDIT_GRANT_BODY, executionRetentionBody, MAX_GRANT_CENTS, SPEND_CAP_BODY } from './billing';
import { parseBody } from './parse-body';

function details(schema: Parameters<typeof parseBody>[0], body: unknown) {
  try {
    parseBody(schema, body, 'm');
  } catch (error) {
    if (error instanceof ServiceError) return error.details;
    throw error;
  }
  return null;
}

const INSTANT_MESSAGE = 'must be an ISO 8601 date such as 2026-05-01 or a timestamp with a time zone such as 2026-05-01T12:00:00Z';

describe('credit grant bodies', () => {
  const valid = { kind: 'promotional', amount_cents: 500, currency: 'usd', expires_at: '2026-06-01T00:00:00Z' };

  it('accept a promotional grant with an expiry and a paid one without', () => {
    expect(CREDIT_GRANT_BODY.parse(valid)).toEqual({ ...valid, expires_at: new Date('2026-06-01T00:00:00Z') });
    expect(CREDIT_GRANT_BODY.parse({ kind: 'paid', amount_cents: MAX_GRANT_CENTS, currency: 'brl' })).toEqual({
      kind: 'paid',
      amount_cents: MAX_GRANT_CENTS,
      currency: 'brl',
    });
    expect(CREDIT_GRANT_BODY.parse({ ...valid, expires_at: null })).toMatchObject({ expires_at: null });
    expect(CREDIT_GRANT_BODY.parse({ ...valid, expires_at: '2028-02-29' })).toMatchObject({ expires_at: new Date('2028-02-29T00:00:00Z') });
    expect(CREDIT_GRANT_BODY.parse({ ...valid, expires_at: '2026-06-01T00:00:00.123+02:00' })).toMatchObject({
      expires_at: new Date('2026-05-31T22:00:00.123Z'),
    });
  });

  it('names every problem at once, in the order of the fields', () => {
    expect(details(CREDIT_GRANT_BODY, { kind: 'gift', amount_cents: 0, currency: 'eur', expires_at: 'tomorrow' })).toEqual([
      { path: 'kind', message: 'must be one of promotional, paid' },
      { path: 'amount_cents', message: `must be an integer from 1 to ${MAX_GRANT_CENTS}` },
      { path: 'currency', message: 'must be one of usd, brl' },
      { path: 'expires_at', message: INSTANT_MESSAGE },
    ]);
    for (const amount_cents of [1.5, '5', MAX_GRANT_CENTS + 1, -3, null, undefined])
      expect(details(CREDIT_GRANT_BODY, { ...valid, amount_cents })).toEqual([{ path: 'amount_cents', message: expect.any(String) }]);
    for (const expires_at of ['2026-06-01T00:00:00', '2026-13-01T00:00:00Z', '2026-02-31T00:00:00Z', '2026-06-01T24:00:00Z', '2026-06-01 00:00:00Z', 5])
      expect(details(CREDIT_GRANT_BODY, { ...valid, expires_at })).toEqual([{ path: 'expires_at', message: expect.stringContaining(INSTANT_MESSAGE) }]);
  });

  it('refuses an expiry on paid credits, beside the other fields’ problems', () => {
    const paidExpiry = { path: 'expires_at', message: 'paid credits never expire; only promotional credits take expires_at' };
    expect(details(CREDIT_GRANT_BODY, { ...valid, kind: 'paid' })).toEqual([paidExpiry]);
    expect(details(CREDIT_GRANT_BODY, { ...valid, kind: 'paid', amount_cents: 0 })).toEqual([
      { path: 'amount_cents', message: `must be an integer from 1 to ${MAX_GRANT_CENTS}` },
      paidExpiry,
    ]);
    expect(details(CREDIT_GRANT_BODY, { ...valid, kind: 'paid', expires_at: 'soon' })).toEqual([{ path: 'expires_at', message: INSTANT_MESSAGE }]);
    expect(details(CREDIT_GRANT_BODY, { ...valid, kind: 'paid', expires_at: null })).toBeNull();
  });
});

describe('spend cap bodies', () => {
  it('take whole cents, 0 included, or null for no cap', () => {
    expect(SPEND_CAP_BODY.parse({ spend_cap_cents: 0 })).toEqual({ spend_cap_cents: 0 });
    expect(SPEND_CAP_BODY.parse({ spend_cap_cents: 12_345 })).toEqual({ spend_cap_cents: 12_345 });
    expect(SPEND_CAP_BODY.parse({ spend_cap_cents: null })).toEqual({ spend_cap_cents: null });
  });

  it.each([-1, 1.5, '100', undefined, MAX_GRANT_CENTS + 1, Number.MAX_SAFE_INTEGER + 1, true])('refuse %p', (spend_cap_cents) => {
    expect(details(SPEND_CAP_BODY, { spend_cap_cents })).toEqual([
      { path: 'spend_cap_cents', message: `must be a whole number from 0 to ${MAX_GRANT_CENTS} cents, or null for no cap` },
    ]);
  });
});

describe('execution retention bodies', () => {
  it('accept whole days from 1 to the plan’s retention, and null for the plan’s', () => {
    expect(executionRetentionBody(7).parse({ days: 1 })).toEqual({ days: 1 });
    expect(executionRetentionBody(7).parse({ days: 7 })).toEqual({ days: 7 });
    expect(executionRetentionBody(7).parse({ days: null })).toEqual({ days: null });
  });

  it.each([0, -1, 8, 365, 1.5, '3', undefined, true, Number.NaN, Number.POSITIVE_INFINITY, {}])('refuse %p on a 7-day plan', (days) => {
    expect(details(executionRetentionBody(7), { days })).toEqual([
      { path: 'days', message: "must be a whole number of days from 1 to 7 (the plan's retention), or null for the plan's" },
    ]);
  });
});

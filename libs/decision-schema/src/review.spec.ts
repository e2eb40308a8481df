import { issuesOf, minimalSchema, normalized } from './__fixtures__/schemas';
import {
  auditDraw,
  auditSampled,
  claimVerdict,
  resolveVerdict,
  REVIEW_CLAIM_MINUTES,
  reviewDueAt,
  reviewedDelivery,
  reviewedWebhooks,
  reviewOutcomeSource,
  type ReviewedEventData,
  reviewReason,
  reviewStatus,
  type ReviewItemState,
} from './review';
import { reviewVersions } from './version-review';
import type { ReviewSettings } from './schema-types';

const withReview = (review: unknown, settings: Record<string, unknown> = { storeInput: true }) =>
  ({ ...minimalSchema(), settings: { ...settings, review } }) as Record<string, unknown>;

describe('settings.review', () => {
  it('is absent unless given, so schemas without it normalize as before', () => {
    expect(normalized(minimalSchema()).settings.review).toBeUndefined();
    expect(normalized(withReview(null)).settings.review).toBeUndefined();
  });

  it('fills every default of a given review', () => {
    expect(normalized(withReview({})).settings.review).toEqual({
      when: { actions: [], lowConfidence: false, engineError: false },
      auditRate: 0,
      dueMinutes: 240,
    });
    const full = { when: { actions: ['escalate', 'block'], lowConfidence: true, engineError: true }, auditRate: 0.02, dueMinutes: 60 };
    expect(normalized(withReview(full)).settings.review).toEqual(full);
  });

  it('normalizes a normalized review to itself', () => {
    const once = normalized(withReview({ when: { actions: ['escalate'] }, auditRate: 0.5 }));
    expect(normalized(once as unknown as Record<string, unknown>)).toEqual(once);
  });

  it('is refused, naming the setting, on a decision that does not keep its inputs or its answers', () => {
    const needsInput = { path: 'settings.review', message: 'needs storeInput: true, since a reviewer must see the state the run was called with' };
    expect(issuesOf(withReview({}, {}))).toEqual([needsInput]);
    expect(issuesOf(withReview({}, { storeInput: false }))).toEqual([needsInput]);
    expect(issuesOf(withReview({}, { storeInput: true, storeOutput: false }))).toEqual([
      { path: 'settings.review', message: 'needs storeOutput: true, since a reviewer must see the answers the run gave' },
    ]);
  });

  it.each([
    ['a list', [], [{ path: 'settings.review', message: 'must be an object' }]],
    [{ audit: 1 }, undefined, [{ path: 'settings.review.audit', message: 'unknown property' }]],
    [{ auditRate: 1.5 }, undefined, [{ path: 'settings.review.auditRate', message: 'must be between 0 and 1' }]],
    [{ auditRate: '0.1' }, undefined, [{ path: 'settings.review.auditRate', message: 'must be a number' }]],
    [{ dueMinutes: 0 }, undefined, [{ path: 'settings.review.dueMinutes', message: 'must be between 1 and 43,200' }]],
    [{ dueMinutes: 30.5 }, undefined, [{ path: 'settings.review.dueMinutes', message: 'must be an integer' }]],
    [{ when: { actions: 'escalate' } }, undefined, [{ path: 'settings.review.when.actions', message: 'must be an array' }]],
    [
      { when: { actions: ['escalate', 'approve', 'escalate'] } },
      undefined,
      [
        { path: 'settings.review.when.actions.1', message: 'must be one of continue, block, escalate, fallback' },
        { path: 'settings.review.when.actions.2', message: 'duplicates "escalate"' },
      ],
    ],
    [
      { when: { lowConfidence: 'yes', engineError: 1, other: true } },
      undefined,
      [
        { path: 'settings.review.when.other', message: 'unknown property' },
        { path: 'settings.review.when.lowConfidence', message: 'must be true or false' },
        { path: 'settings.review.when.engineError', message: 'must be true or false' },
      ],
    ],
  ])('names every bad path of %j', (review, _unused, issues) => {
    const value = review === 'a list' ? [] : review;
    expect(issuesOf(withReview(value))).toEqual(issues);
  });

  it('is listed among the changed settings of a version', () => {
    const before = normalized(withReview(null, { storeInput: true }));
    const after = normalized(withReview({ when: { actions: ['escalate'], lowConfidence: true }, auditRate: 0.02 }));
    const itemsOf = (a: typeof before, b: typeof before) => reviewVersions(a, b).areas.flatMap((area) => area.items);
    expect(itemsOf(before, after)).toContainEqual(
      expect.objectContaining({ area: 'settings', subject: 'review', text: 'Setting review: off → escalate, low confidence, 2 % audited, due in 240 min' }),
    );
    expect(itemsOf(after, after).filter((item) => item.subject === 'review')).toEqual([]);
  });
});

describe('audit sampling', () => {
  const ids = Array.from({ length: 20_000 }, (_, i) => `exec_${i.toString(36).padStart(8, '0')}Q${(i * 7919).toString(36)}`);

  it('draws the same number for the same id, whoever asks', () => {
    expect(auditDraw('exec_01HZX8P6Y3R4')).toBe(auditDraw('exec_01HZX8P6Y3R4'));
    expect(auditDraw('exec_01HZX8P6Y3R4')).not.toBe(auditDraw('exec_01HZX8P6Y3R5'));
  });

  it('draws within [0, 1) and spreads ids evenly', () => {
    const draws = ids.map(auditDraw);
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(1);
    const tenths = Array.from({ length: 10 }, (_, t) => draws.filter((d) => Math.floor(d * 10) === t).length);
    // 2,000 expected per tenth; five standard deviations (≈ 212) either way.
    for (const count of tenths) expect(Math.abs(count - 2_000)).toBeLessThan(212);
  });

  it('samples a share close to the rate, never at 0 and always at 1', () => {
    const sampled = ids.filter((id) => auditSampled(id, 0.02)).length;
    // 400 expected; five standard deviations of Binomial(20,000, 0.02) are about 99.
    expect(Math.abs(sampled - 400)).toBeLessThan(99);
    expect(ids.some((id) => auditSampled(id, 0))).toBe(false);
    expect(ids.every((id) => auditSampled(id, 1))).toBe(true);
  });
});

describe('reviewReason', () => {
  const review: ReviewSettings = { when: { actions: ['escalate'], lowConfidence: true, engineError: false }, auditRate: 0, dueMinutes: 240 };
  const run = { executionId: 'exec_a', action: 'continue', reasonType: 'default', engineError: false };

  it('sends the runs that match `when`, one reason each', () => {
    expect(reviewReason(review, { ...run, action: 'escalate', reasonType: 'policy' })).toBe('action');
    expect(reviewReason(review, { ...run, action: 'escalate', reasonType: 'low_confidence' })).toBe('low_confidence');
    expect(reviewReason(review, run)).toBeNull();
    expect(
      reviewReason({ ...review, when: { ...review.when, lowConfidence: false } }, { ...run, action: 'fallback', reasonType: 'low_confidence' }),
    ).toBeNull();
  });

  it('sends engine errors only when asked to, and never audits them', () => {
    const failed = { ...run, action: null, reasonType: null, engineError: true };
    expect(reviewReason({ ...review, auditRate: 1 }, failed)).toBeNull();
    expect(reviewReason({ ...review, when: { ...review.when, engineError: true } }, failed)).toBe('engine_error');
    expect(
      reviewReason({ ...review, when: { ...review.when, engineError: true } }, { ...run, action: 'escalate', reasonType: 'engine_error', engineError: true }),
    ).toBe('engine_error');
  });

  it('audits only runs `when` does not match, by their id', () => {
    expect(reviewReason({ ...review, auditRate: 1 }, run)).toBe('audit');
    expect(reviewReason({ ...review, auditRate: 1 }, { ...run, action: 'escalate' })).toBe('action');
    const drawn = auditDraw('exec_a');
    expect(reviewReason({ ...review, auditRate: drawn }, run)).toBeNull();
    expect(reviewReason({ ...review, auditRate: drawn + 1e-9 }, run)).toBe('audit');
  });

  it('gives audit samples their own outcome source', () => {
    expect(reviewOutcomeSource('audit')).toBe('audit');
    expect(reviewOutcomeSource('action')).toBe('review');
    expect(reviewOutcomeSource('low_confidence')).toBe('review');
  });
});

describe('review item states', () => {
  const now = new Date('2026-11-28T12:00:00Z');
  const minutes = (n: number) => new Date(now.getTime() + n * 60_000);
  const open: ReviewItemState = { dueAt: minutes(60), claimedBy: null, claimExpiresAt: null, resolvedAt: null };

  it('are open, claimed while a claim holds, expired past due, resolved once resolved', () => {
    expect(reviewStatus(open, now)).toBe('open');
    expect(reviewStatus({ ...open, dueAt: now }, now)).toBe('expired');
    expect(reviewStatus({ ...open, claimedBy: 'usr_a', claimExpiresAt: minutes(1) }, now)).toBe('claimed');
    expect(reviewStatus({ ...open, claimedBy: 'usr_a', claimExpiresAt: now }, now)).toBe('open');
    expect(reviewStatus({ ...open, dueAt: minutes(-1), claimedBy: 'usr_a', claimExpiresAt: minutes(-2) }, now)).toBe('expired');
    expect(reviewStatus({ ...open, resolvedAt: minutes(-5), claimedBy: 'usr_a', claimExpiresAt: minutes(5) }, now)).toBe('resolved');
  });

  it('let one reviewer hold a claim for 15 minutes, renewed by its holder, taken over once lapsed', () => {
    expect(claimVerdict(open, 'usr_a', now)).toEqual({ ok: true, claimExpiresAt: minutes(REVIEW_CLAIM_MINUTES) });
    const held = { ...open, claimedBy: 'usr_a', claimExpiresAt: minutes(3) };
    expect(claimVerdict(held, 'usr_b', now)).toEqual({ ok: false, reason: 'held' });
    expect(claimVerdict(held, 'usr_a', now)).toEqual({ ok: true, claimExpiresAt: minutes(15) });
    expect(claimVerdict({ ...held, claimExpiresAt: now }, 'usr_b', now)).toEqual({ ok: true, claimExpiresAt: minutes(15) });
    expect(claimVerdict({ ...open, resolvedAt: now }, 'usr_a', now)).toEqual({ ok: false, reason: 'resolved' });
    expect(claimVerdict({ ...open, dueAt: minutes(-600) }, 'usr_a', now).ok).toBe(true);
  });

  it('are resolved once, by the holder of a claim or by anyone when unclaimed', () => {
    const held = { ...open, claimedBy: 'usr_a', claimExpiresAt: minutes(3) };
    expect(resolveVerdict(held, 'usr_a', now)).toEqual({ ok: true });
    expect(resolveVerdict(held, 'usr_b', now)).toEqual({ ok: false, reason: 'held' });
    expect(resolveVerdict({ ...open, dueAt: minutes(-1) }, 'usr_b', now)).toEqual({ ok: true });
    expect(resolveVerdict({ ...open, resolvedAt: now }, 'usr_a', now)).toEqual({ ok: false, reason: 'resolved' });
  });

  it('are due dueMinutes after the run', () => {
    expect(reviewDueAt({ when: { actions: [], lowConfidence: false, engineError: false }, auditRate: 0, dueMinutes: 240 }, now)).toEqual(minutes(240));
  });
});

describe('webhooks on review', () => {
  const destinations = [
    { key: 'ops', type: 'webhook', url: 'https://hooks.example.com/completed' },
    { key: 'crm', type: 'webhook', url: 'https://hooks.example.com/reviewed', on: 'reviewed', headers: { 'X-Team': 'review' } },
  ];
  const schema = () => normalized({ ...minimalSchema(), destinations });

  it('are told apart from the run’s webhooks, and schemas without them normalize as before', () => {
    expect(reviewedWebhooks(schema()).map((destination) => destination.key)).toEqual(['crm']);
    expect(schema().destinations[0]).not.toHaveProperty('on');
    expect(normalized({ ...minimalSchema(), destinations: [{ ...destinations[0], on: 'completed' }] }).destinations[0]).not.toHaveProperty('on');
  });

  it('take no conditions, and `on` only on a webhook', () => {
    expect(issuesOf({ ...minimalSchema(), destinations: [{ ...destinations[1], when: [{ on: 'action', op: 'eq', value: 'escalate' }] }] })).toEqual([
      { path: 'destinations.0.when', message: 'must be empty: a webhook on "reviewed" fires for every resolved review' },
    ]);
    expect(issuesOf({ ...minimalSchema(), destinations: [{ ...destinations[1], on: 'resolved' }] })).toEqual([
      { path: 'destinations.0.on', message: 'must be one of completed, reviewed' },
    ]);
    expect(issuesOf({ ...minimalSchema(), destinations: [{ key: 'flow', type: 'workflow', url: 'https://flows.example.com/x', on: 'reviewed' }] })).toEqual([
      { path: 'destinations.0.on', message: 'unknown property' },
    ]);
  });

  it('send the decision.reviewed event with the destination’s headers', () => {
    const [crm] = reviewedWebhooks(schema());
    const data = { review_id: 'rev_a' } as unknown as ReviewedEventData;
    const request = reviewedDelivery(crm!, { deliveryId: 'dlv_a', created: 1_800_000_000, livemode: false }, data);
    expect(request.headers).toEqual({ 'X-Team': 'review', 'content-type': 'application/json' });
    expect(JSON.parse(request.body)).toEqual({ id: 'dlv_a', type: 'decision.reviewed', created: 1_800_000_000, livemode: false, data: { review_id: 'rev_a' } });
  });
});

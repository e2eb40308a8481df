import { invitationExpiry, invitationState, secondsUntilInvitationFits, unusableInvitation } from './invitation-rules';

const now = new Date('2026-11-25T12:00:00Z');
const minutesAgo = (minutes: number) => new Date(now.getTime() - minutes * 60_000);

describe('secondsUntilInvitationFits', () => {
  it('lets one more through below the limit, and ignores what left the hour', () => {
    expect(secondsUntilInvitationFits([], now)).toBeNull();
    expect(
      secondsUntilInvitationFits(
        Array.from({ length: 29 }, (_, i) => minutesAgo(i)),
        now,
      ),
    ).toBeNull();
    expect(
      secondsUntilInvitationFits(
        Array.from({ length: 30 }, () => minutesAgo(61)),
        now,
      ),
    ).toBeNull();
  });

  it('at the limit, waits until the limit-th most recent leaves the hour, whatever the order given', () => {
    const sent = Array.from({ length: 30 }, (_, i) => minutesAgo(i * 2));
    // The 30th most recent was sent 58 minutes ago: two minutes to go.
    expect(secondsUntilInvitationFits([...sent].reverse(), now)).toBe(120);
    // One more, sent 30 seconds ago: now the 30th most recent is the one of 56 minutes ago.
    expect(secondsUntilInvitationFits([...sent, minutesAgo(0.5)], now)).toBe(240);
  });

  it('waits at least a second', () => {
    expect(secondsUntilInvitationFits([new Date(now.getTime() - 3_600_000 + 1)], now, 1)).toBe(1);
  });
});

describe('invitationExpiry', () => {
  it('is seven days on', () => {
    expect(invitationExpiry(now).toISOString()).toBe('2026-12-02T12:00:00.000Z');
  });
});

describe('invitationState', () => {
  const pending = { accepted_at: null, revoked_at: null, expires_at: minutesAgo(-1) };
  it('is pending until the expiry instant, then expired', () => {
    expect(invitationState(pending, now)).toBe('pending');
    expect(invitationState({ ...pending, expires_at: now }, now)).toBe('expired');
  });
  it('puts used before withdrawn before expired', () => {
    expect(invitationState({ accepted_at: minutesAgo(5), revoked_at: minutesAgo(2), expires_at: minutesAgo(1) }, now)).toBe('accepted');
    expect(invitationState({ accepted_at: null, revoked_at: minutesAgo(2), expires_at: minutesAgo(1) }, now)).toBe('revoked');
  });
});

describe('unusableInvitation', () => {
  it.each(['unknown', 'accepted', 'revoked', 'expired'] as const)('is a 404 naming the reason %s, with a next step', (reason) => {
    const refusal = unusableInvitation(reason);
    expect(refusal.code).toBe('NOT_FOUND');
    expect(refusal.status).toBe(404);
    expect(refusal.details).toEqual({ reason });
    expect(refusal.message).toMatch(/Ask|ask/);
  });
  it('says when an expired one ended', () => {
    expect(unusableInvitation('expired', now).details).toEqual({ reason: 'expired', expired_at: now.toISOString() });
  });
});

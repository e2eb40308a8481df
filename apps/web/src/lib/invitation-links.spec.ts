import { acceptPath, authPathFor, hasNoAccount, invitationFrom, linkOriginElsewhere, sameAddress, unusableReason } from './invitation-links';

describe('invitation paths', () => {
  it('reads the token under its name, and nothing from an empty one', () => {
    expect(invitationFrom('?token=inv_tok_a-b', 'token')).toBe('inv_tok_a-b');
    expect(invitationFrom('?invitation=inv_tok_x&next=/y', 'invitation')).toBe('inv_tok_x');
    expect(invitationFrom('?token=', 'token')).toBeNull();
    expect(invitationFrom('?token=inv_tok_a', 'invitation')).toBeNull();
  });

  it('builds paths that read back to the same token', () => {
    const token = 'inv_tok_Ab-_9+/=';
    expect(invitationFrom(acceptPath(token).split('?')[1]!, 'token')).toBe(token);
    expect(authPathFor('sign-up', token)).toMatch(/^\/sign-up\?invitation=/);
    expect(invitationFrom(authPathFor('sign-in', token).split('?')[1]!, 'invitation')).toBe(token);
  });
});

describe('unusableReason', () => {
  it.each(['unknown', 'accepted', 'revoked', 'expired'])('reads %s from a 404', (reason) => {
    expect(unusableReason({ status: 404, details: { reason } })).toBe(reason);
  });

  it('takes a 404 without a reason as an unknown link, and anything else as no reason', () => {
    expect(unusableReason({ status: 404, details: null })).toBe('unknown');
    expect(unusableReason({ status: 404, details: { reason: 'email_unverified' } })).toBeNull();
    expect(unusableReason({ status: 403, details: { reason: 'expired' } })).toBeNull();
    expect(unusableReason({ status: 0, details: null })).toBeNull();
    expect(unusableReason(null)).toBeNull();
  });
});

describe('hasNoAccount', () => {
  it('is only the 404 that names no_account', () => {
    expect(hasNoAccount({ status: 404, details: { reason: 'no_account' } })).toBe(true);
    expect(hasNoAccount({ status: 404, details: null })).toBe(false);
    expect(hasNoAccount({ status: 409, details: { reason: 'no_account' } })).toBe(false);
    expect(hasNoAccount(null)).toBe(false);
  });
});

describe('sameAddress', () => {
  it('ignores case and Unicode composition', () => {
    expect(sameAddress('Ana@Example.com', 'ana@example.com')).toBe(true);
    expect(sameAddress('jose\u0301@example.com', 'josé@example.com')).toBe(true);
    expect(sameAddress('ana@example.com', 'ann@example.com')).toBe(false);
  });
});

describe('linkOriginElsewhere', () => {
  it('is null at the same origin and at another loopback spelling of it', () => {
    expect(linkOriginElsewhere('https://app.example.com/invitations/accept?token=x', 'https://app.example.com/members')).toBeNull();
    expect(linkOriginElsewhere('http://localhost:3000/invitations/accept', 'http://127.0.0.1:3000/members')).toBeNull();
  });

  it('names the link’s origin when it leads elsewhere', () => {
    expect(linkOriginElsewhere('http://localhost:3000/invitations/accept', 'http://127.0.0.1:4100/members')).toBe('http://localhost:3000');
    expect(linkOriginElsewhere('http://localhost:3000/x', 'https://app.example.com/members')).toBe('http://localhost:3000');
  });

  it('is null for something that is not a link', () => {
    expect(linkOriginElsewhere('not a link', 'https://app.example.com')).toBeNull();
  });
});

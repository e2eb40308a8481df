import { randomUUID } from 'node:crypto';
import { call, expectError, newWorkspace, signUp } from './support/api';
import { eventually } from './support/deliveries';
import { waitForMail } from './support/mailbox';

/**
 * Accounts where the installation sends e-mail (the shared cluster's SMTP_URL, a real SMTP server the tests start):
 * an address is proven by a code before its account joins a workspace or owns a paid plan; proving an address held
 * by an account nobody had proven makes it the prover's alone; sessions are listed and ended; a forgotten password
 * is reset by a code; look-alike spellings of an address are one address.
 */
const PASSWORD = 'correcthorse42';

function codeIn(text: string): string {
  const match = /\b(\d{6})\b/.exec(text);
  if (!match) throw new Error(`no code in: ${text}`);
  return match[1]!;
}

async function codeMailed(email: string, count: number, subject: RegExp): Promise<string> {
  const mails = await waitForMail(email, count);
  const mail = mails.at(-1)!;
  expect(mail.subject).toMatch(subject);
  return codeIn(mail.text);
}

const signUpAs = (email: string, password = PASSWORD) => call('POST', '/app/v1/auth/sign-up', { body: { email, password, name: 'Someone' } });
const signIn = (email: string, password = PASSWORD) => call('POST', '/app/v1/auth/sign-in', { body: { email, password } });
const account = (token: string) => call('GET', '/app/v1/auth/account', { token });
const wrong = (code: string) => (code === '000000' ? '000001' : '000000');

describe('a pre-account hijack', () => {
  it('ends with the attacker signed out and without a password once the owner proves the address', async () => {
    const victim = `victim-${randomUUID()}@corp.example`;
    // The attacker signs up first under the victim's address and keeps two sessions.
    const attackerSignUp = await signUpAs(victim, 'attackerpass99');
    expect(attackerSignUp.status).toBe(201);
    const attackerSessions = [attackerSignUp.body.session.token, (await signIn(victim, 'attackerpass99')).body.session.token];
    expect((await account(attackerSessions[0])).body).toMatchObject({ email: victim, email_verified: false, has_password: true });

    // Unproven, the account can neither be added to a workspace nor accept an invitation to one.
    const ws = await newWorkspace();
    const refusedMember = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: victim, role: 'admin' } });
    expectError(refusedMember, 409, 'CONFLICT');
    expect(refusedMember.body.error.details).toEqual({ reason: 'email_unverified' });
    const invitation = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/invitations`, { token: ws.session, body: { email: victim, role: 'admin' } });
    expect(invitation.status).toBe(201);
    const refusedAccept = await call('POST', '/app/v1/invitations/accept', { token: attackerSessions[0], body: { token: invitation.body.token } });
    expectError(refusedAccept, 403, 'FORBIDDEN');
    expect(refusedAccept.body.error.details).toEqual({ reason: 'email_unverified' });

    // The owner of the address signs in with a code mailed to it (the invitation e-mail came first).
    expect((await call('POST', '/app/v1/auth/sign-in-codes', { body: { email: victim } })).status).toBe(202);
    const code = await codeMailed(victim, 2, /sign-in code/);
    const owner = await call('POST', '/app/v1/auth/sign-in-codes/verify', { body: { email: victim, code } });
    expect(owner.status).toBe(200);
    const ownerSession = owner.body.session.token;

    for (const token of attackerSessions) expectError(await call('GET', '/app/v1/workspaces', { token }), 401, 'UNAUTHORIZED');
    expectError(await signIn(victim, 'attackerpass99'), 401, 'UNAUTHORIZED');
    expect((await account(ownerSession)).body).toEqual({
      id: attackerSignUp.body.user.id,
      email: victim,
      name: 'Someone',
      email_verified: true,
      has_password: false,
    });
    const sessions = (await call('GET', '/app/v1/auth/sessions', { token: ownerSession })).body.data;
    expect(sessions).toEqual([expect.objectContaining({ method: 'sign_in_code', current: true })]);

    // Now proven, the owner joins; a second code sign-in changes nothing more.
    const accepted = await call('POST', '/app/v1/invitations/accept', { token: ownerSession, body: { token: invitation.body.token } });
    expect(accepted.status).toBe(200);
    expect(accepted.body.role).toBe('admin');
  });

  it('is refused ownership of a paid plan until the address is proven', async () => {
    const user = await signUp({ verified: false });
    const workspace = await call('POST', '/app/v1/workspaces', { token: user.session, body: { name: 'Unproven' } });
    const paid = { token: process.env.E2E_ADMIN_TOKEN, body: { plan: 'growth' } };
    const refused = await call('PUT', `/admin/v1/workspaces/${workspace.body.id}/plan`, paid);
    expectError(refused, 409, 'CONFLICT');
    expect(refused.body.error.details).toEqual({ reason: 'email_unverified' });
    expect((await call('PUT', `/admin/v1/workspaces/${workspace.body.id}/plan`, { ...paid, body: { plan: 'genesis' } })).status).toBe(200);

    const requested = await call('POST', '/app/v1/auth/email-verification', { token: user.session });
    expect(requested.status).toBe(202);
    expect(requested.body.email).toBe(user.email);
    const code = await codeMailed(user.email, 1, /verification code/);
    expectError(await call('POST', '/app/v1/auth/email-verification/verify', { token: user.session, body: { code: wrong(code) } }), 401, 'UNAUTHORIZED');
    expect((await call('PUT', `/admin/v1/workspaces/${workspace.body.id}/plan`, paid)).status).toBe(409);
    const verified = await call('POST', '/app/v1/auth/email-verification/verify', { token: user.session, body: { code } });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ email_verified: true, has_password: true });
    expect((await call('PUT', `/admin/v1/workspaces/${workspace.body.id}/plan`, paid)).status).toBe(200);
    expectError(await call('POST', '/app/v1/auth/email-verification', { token: user.session }), 409, 'CONFLICT');
  });
});

describe('verifying an address from a session', () => {
  it('ends every other session and keeps the password its session was opened with', async () => {
    const user = await signUp({ verified: false });
    const other = (await signIn(user.email)).body.session.token;
    expect((await call('POST', '/app/v1/auth/email-verification', { token: user.session })).status).toBe(202);
    const code = await codeMailed(user.email, 1, /verification code/);
    expect((await call('POST', '/app/v1/auth/email-verification/verify', { token: user.session, body: { code } })).status).toBe(200);
    expectError(await account(other), 401, 'UNAUTHORIZED');
    expect((await account(user.session)).body.email_verified).toBe(true);
    expect((await signIn(user.email)).status).toBe(200);
  });
});

describe('sessions', () => {
  it('are listed with the current one marked, and ended one at a time or all but this one', async () => {
    const user = await signUp();
    const second = await call('POST', '/app/v1/auth/sign-in', {
      body: { email: user.email, password: user.password },
      headers: { 'user-agent': 'Second browser/1.0' },
    });
    const third = (await signIn(user.email)).body.session.token;
    const listed = await call('GET', '/app/v1/auth/sessions', { token: user.session });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(3);
    expect(listed.body.data.filter((session: { current: boolean }) => session.current)).toEqual([expect.objectContaining({ method: 'sign_up' })]);
    const secondRow = listed.body.data.find((session: { user_agent: string | null }) => session.user_agent === 'Second browser/1.0');
    expect(secondRow).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      method: 'password',
      user_agent: 'Second browser/1.0',
      // Where the gateway saw the sign-in come from; not used since it was opened.
      address: expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$/),
      created_at: expect.any(String),
      last_active_at: null,
      expires_at: expect.any(String),
      current: false,
    });
    // Nothing of the token is shown.
    expect(listed.text).not.toContain(second.body.session.token);

    // Another user can neither see nor end them.
    const stranger = await signUp();
    expectError(await call('DELETE', `/app/v1/auth/sessions/${secondRow.id}`, { token: stranger.session }), 404, 'NOT_FOUND');
    expectError(await call('DELETE', '/app/v1/auth/sessions/not-a-session', { token: user.session }), 404, 'NOT_FOUND');
    expect((await call('GET', '/app/v1/auth/sessions', { token: stranger.session })).body.data).toHaveLength(1);

    expect((await call('DELETE', `/app/v1/auth/sessions/${secondRow.id}`, { token: user.session })).status).toBe(204);
    expectError(await account(second.body.session.token), 401, 'UNAUTHORIZED');
    expect((await account(third)).status).toBe(200);
    // A signed-in request marks its session active, without holding up the request.
    const thirdActive = await eventually(
      async () => {
        const rows: Array<{ current: boolean; method: string; last_active_at: string | null }> = (
          await call('GET', '/app/v1/auth/sessions', { token: user.session })
        ).body.data;
        return rows.find((row) => !row.current && row.last_active_at !== null)?.last_active_at;
      },
      5_000,
      'the used session to be marked active',
    );
    expect(Math.abs(Date.parse(thirdActive) - Date.now())).toBeLessThan(60_000);

    const revoked = await call('POST', '/app/v1/auth/sessions/revoke-others', { token: user.session });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ revoked: 1 });
    expectError(await account(third), 401, 'UNAUTHORIZED');
    expect((await call('GET', '/app/v1/auth/sessions', { token: user.session })).body.data).toEqual([expect.objectContaining({ current: true })]);
    expectError(await call('GET', '/app/v1/auth/sessions', { token: null }), 401, 'UNAUTHORIZED');
  });
});

describe('a password reset', () => {
  it('sets a new password with a mailed code and ends every session', async () => {
    const user = await signUp();
    const other = (await signIn(user.email)).body.session.token;
    const requested = await call('POST', '/app/v1/auth/password-resets', { body: { email: user.email.toUpperCase() } });
    expect(requested.status).toBe(202);
    expect(Object.keys(requested.body)).toEqual(['expires_at']);
    // An e-mail without an account gets the same answer and no mail.
    const nobody = await call('POST', '/app/v1/auth/password-resets', { body: { email: `nobody-${randomUUID()}@example.com` } });
    expect(nobody.status).toBe(202);

    const code = await codeMailed(user.email, 1, /password reset code/);
    const reset = (body: Record<string, unknown>) => call('POST', '/app/v1/auth/password-resets/verify', { body: { email: user.email, ...body } });
    const tooShort = await reset({ code, password: 'short' });
    expectError(tooShort, 400, 'INVALID_REQUEST');
    expect(tooShort.body.error.details).toEqual([{ path: 'password', message: expect.any(String) }]);
    expectError(await reset({ code: wrong(code), password: 'brandnewpass7' }), 401, 'UNAUTHORIZED');
    // A sign-in code is not a reset code.
    expectError(await call('POST', '/app/v1/auth/sign-in-codes/verify', { body: { email: user.email, code } }), 401, 'UNAUTHORIZED');

    const done = await reset({ code, password: 'brandnewpass7' });
    expect(done.status).toBe(200);
    expect(done.body.user.id).toBe(user.userId);
    for (const token of [user.session, other]) expectError(await account(token), 401, 'UNAUTHORIZED');
    expectError(await signIn(user.email), 401, 'UNAUTHORIZED');
    expect((await signIn(user.email, 'brandnewpass7')).status).toBe(200);
    expect((await account(done.body.session.token)).body).toMatchObject({ email_verified: true, has_password: true });
    // Once only.
    expectError(await reset({ code, password: 'anotherpass88' }), 401, 'UNAUTHORIZED');
  });
});

describe('look-alike addresses', () => {
  it('are one address: composed and decomposed letters, any case', async () => {
    const tag = randomUUID().slice(0, 8);
    const decomposed = `Rene\u0301-${tag}@Example.com`;
    const composed = `REN\u00c9-${tag}@example.COM`;
    const created = await signUpAs(decomposed);
    expect(created.status).toBe(201);
    expect(created.body.user.email).toBe(`ren\u00e9-${tag}@example.com`);
    expectError(await signUpAs(composed, 'differentpass1'), 409, 'CONFLICT');
    const signedIn = await signIn(composed);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.user.id).toBe(created.body.user.id);

    // An invitation to another spelling is the same person's, and so is a sign-in code.
    const ws = await newWorkspace();
    const invitation = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/invitations`, {
      token: ws.session,
      body: { email: `rEn\u00c9-${tag}@EXAMPLE.com`, role: 'viewer' },
    });
    expect(invitation.body.email).toBe(`ren\u00e9-${tag}@example.com`);
    expect((await call('POST', '/app/v1/auth/sign-in-codes', { body: { email: decomposed.toUpperCase() } })).status).toBe(202);
    const code = await codeMailed(`ren\u00e9-${tag}@example.com`, 2, /sign-in code/);
    const byCode = await call('POST', '/app/v1/auth/sign-in-codes/verify', { body: { email: composed, code } });
    expect(byCode.body.user.id).toBe(created.body.user.id);
    expect((await call('POST', '/app/v1/invitations/accept', { token: byCode.body.session.token, body: { token: invitation.body.token } })).status).toBe(200);
  });
});

import { randomUUID } from 'node:crypto';
import { call, expectError, newWorkspace, signUp } from './support/api';
import { mailTo, waitForMail } from './support/mailbox';

/**
 * Sign-in codes and invitation e-mails through a real SMTP server the tests start (the shared cluster's SMTP_URL):
 * the spec's limits (valid 10 minutes, 5 attempts, 3 codes per e-mail per 10 minutes), and answers that never tell
 * which e-mails have an account.
 */
const requestCode = (email: string) => call('POST', '/app/v1/auth/sign-in-codes', { body: { email } });
const verify = (email: string, code: unknown) => call('POST', '/app/v1/auth/sign-in-codes/verify', { body: { email, code } });

function codeIn(text: string): string {
  const match = /\b(\d{6})\b/.exec(text);
  if (!match) throw new Error(`no code in: ${text}`);
  return match[1]!;
}

async function latestCode(email: string, count: number): Promise<string> {
  const mails = await waitForMail(email, count);
  return codeIn(mails.at(-1)!.text);
}

describe('sign-in codes', () => {
  it('are offered where e-mail goes out', async () => {
    expect((await call('GET', '/app/v1/auth/methods')).body).toEqual({ password: true, sign_in_code: true, password_reset: true, email_verification: true });
  });

  it('sign in once with the code mailed, valid for ten minutes', async () => {
    const user = await signUp();
    const before = Date.now();
    const requested = await requestCode(user.email.toUpperCase());
    expect(requested.status).toBe(202);
    expect(Object.keys(requested.body)).toEqual(['expires_at']);
    const lifetime = new Date(requested.body.expires_at).getTime() - before;
    expect(lifetime).toBeGreaterThan(9 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(10 * 60_000 + 5_000);

    const [mail] = await waitForMail(user.email);
    expect(mail!.from).toContain('no-reply@example.com');
    expect(mail!.text).toContain('10 minutes');
    const code = codeIn(mail!.text);

    expectError(await verify(user.email, code === '000000' ? '000001' : '000000'), 401, 'UNAUTHORIZED');
    const signedIn = await verify(user.email, code);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toEqual({
      user: { id: user.userId, email: user.email, name: 'Test User' },
      session: { token: expect.any(String), expires_at: expect.any(String) },
    });
    expect((await call('GET', '/app/v1/workspaces', { token: signedIn.body.session.token })).status).toBe(200);
    // Once only.
    expectError(await verify(user.email, code), 401, 'UNAUTHORIZED');
  });

  it('answer an e-mail without an account exactly as one with, and mail it nothing', async () => {
    const nobody = `nobody-${randomUUID()}@example.com`;
    const user = await signUp();
    const unknown = await requestCode(nobody);
    const known = await requestCode(user.email);
    expect({ status: unknown.status, keys: Object.keys(unknown.body) }).toEqual({ status: known.status, keys: Object.keys(known.body) });
    await waitForMail(user.email);
    expect(await mailTo(nobody)).toEqual([]);
    expectError(await verify(nobody, '123456'), 401, 'UNAUTHORIZED');
  });

  it('allow three per e-mail in ten minutes, and only the newest code works', async () => {
    const user = await signUp();
    for (let i = 1; i <= 3; i++) expect((await requestCode(user.email)).status).toBe(202);
    const refused = await requestCode(user.email);
    expectError(refused, 429, 'RATE_LIMITED');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(500);
    expect(retryAfter).toBeLessThanOrEqual(600);
    // The same ceiling for an e-mail without an account.
    const nobody = `nobody-${randomUUID()}@example.com`;
    for (let i = 1; i <= 3; i++) expect((await requestCode(nobody)).status).toBe(202);
    expectError(await requestCode(nobody), 429, 'RATE_LIMITED');

    // Requests that race are counted one at a time.
    const racing = `racing-${randomUUID()}@example.com`;
    const raced = await Promise.all(Array.from({ length: 6 }, () => requestCode(racing)));
    expect(raced.map((reply) => reply.status).sort()).toEqual([202, 202, 202, 429, 429, 429]);

    const mails = await waitForMail(user.email, 3);
    const [first, , newest] = mails.map((mail) => codeIn(mail.text));
    if (first !== newest) expectError(await verify(user.email, first), 401, 'UNAUTHORIZED');
    expect((await verify(user.email, newest)).status).toBe(200);
  });

  it('give each code five attempts', async () => {
    const user = await signUp();
    expect((await requestCode(user.email)).status).toBe(202);
    const code = await latestCode(user.email, 1);
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    for (let attempt = 1; attempt <= 4; attempt++) {
      const refused = await verify(user.email, wrong);
      expectError(refused, 401, 'UNAUTHORIZED');
      expect(refused.body.error.message).not.toContain('last attempt');
    }
    const fifth = await verify(user.email, wrong);
    expectError(fifth, 401, 'UNAUTHORIZED');
    expect(fifth.body.error.message).toContain('last attempt');
    // The right code no longer helps: the code is spent.
    expectError(await verify(user.email, code), 401, 'UNAUTHORIZED');
  });

  it('refuse a malformed e-mail, and a code that is not six digits without spending an attempt', async () => {
    const malformed = await requestCode('not-an-email');
    expectError(malformed, 400, 'INVALID_REQUEST');
    expect(malformed.body.error.details).toEqual([{ path: 'email', message: 'must be an e-mail address' }]);

    const user = await signUp();
    expect((await requestCode(user.email)).status).toBe(202);
    const code = await latestCode(user.email, 1);
    for (const bad of ['12345', '1234567', 'abcdef', 123456, null]) expectError(await verify(user.email, bad), 401, 'UNAUTHORIZED');
    expect((await verify(user.email, code)).status).toBe(200);
  });
});

describe('invitation e-mails', () => {
  it('carry the link to the invited address, and the answer says so', async () => {
    const ws = await newWorkspace();
    const invitee = `invitee-${randomUUID()}@example.com`;
    const sent = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/invitations`, { token: ws.session, body: { email: invitee, role: 'viewer' } });
    expect(sent.status).toBe(201);
    expect(sent.body.emailed).toBe(true);
    const [mail] = await waitForMail(invitee);
    expect(mail!.subject).toBe('Test User invited you to Test workspace');
    expect(mail!.text).toContain(sent.body.url);
    expect(mail!.text).toContain('as viewer');
  });
});

import { randomUUID } from 'node:crypto';
import { call, newWorkspace, signUp } from './support/api';
import { BrowserRun, scrollsSideways } from './support/browser-run';
import { waitForMail } from './support/mailbox';

/**
 * The account screens in a real Chromium against the shared cluster (which sends e-mail to the tests' SMTP server):
 * "Forgot password?" on the sign-in page, verifying an address before joining a workspace, and the sessions list.
 */
const run = new BrowserRun();

beforeAll(() => run.start());
afterAll(() => run.close());

async function codeFor(email: string, count: number): Promise<string> {
  const mails = await waitForMail(email, count);
  const match = /\b(\d{6})\b/.exec(mails.at(-1)!.text);
  if (!match) throw new Error('no code in the mail');
  return match[1]!;
}

describe('the account screens', () => {
  it('reset a forgotten password with a mailed code, signed in afterwards and out everywhere else', async () => {
    const user = await signUp();
    const page = await run.tab();
    await page.goto('/sign-in');
    await page.getByRole('button', { name: 'Forgot password?' }).click();
    await page.getByLabel('E-mail').fill(user.email);
    await run.screen(page, 'password-reset-request');
    await page.getByRole('button', { name: 'E-mail me a reset code' }).click();
    await page.getByRole('status').filter({ hasText: user.email }).waitFor();
    await page.getByLabel('Code from the e-mail').fill(await codeFor(user.email, 1));
    await page.getByRole('textbox', { name: /^New password/ }).fill('freshpassword9');
    await run.screen(page, 'password-reset');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.waitForURL('**/decisions');

    // The session the test signed up with was ended; the new password signs in.
    expect((await call('GET', '/app/v1/auth/account', { token: user.session })).status).toBe(401);
    expect((await call('POST', '/app/v1/auth/sign-in', { body: { email: user.email, password: 'freshpassword9' } })).status).toBe(200);
  });

  it('asks an unverified invitee for the code, says why, and lets them join once verified', async () => {
    const owner = await newWorkspace();
    const invitee = await signUp({ verified: false });
    const invitation = await call('POST', `/app/v1/workspaces/${owner.workspaceId}/invitations`, {
      token: owner.session,
      body: { email: invitee.email, role: 'member' },
    });
    const link = new URL(invitation.body.url);
    const page = await run.tab({ session: invitee.session });
    await page.goto(`${link.pathname}${link.search}`);
    const join = page.getByRole('button', { name: 'Join the workspace' });
    await page.getByRole('heading', { name: 'Verify your e-mail address' }).waitFor();
    expect(await join.isDisabled()).toBe(true);
    await page.getByText('cannot accept invitations').waitFor();
    await page.getByRole('button', { name: 'E-mail me a code' }).click();
    // The invitation's own e-mail came first.
    await page.getByLabel('Verification code').fill(await codeFor(invitee.email, 2));
    await run.screen(page, 'verify-email');
    // Verifying is the last step, so it joins at once.
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
    await page.waitForURL('**/decisions');
    const members = await call('GET', `/app/v1/workspaces/${owner.workspaceId}/members`, { token: owner.session });
    expect(members.body.data.find((member: { email: string }) => member.email === invitee.email)?.role).toBe('member');
  });

  it('list the sessions, end one and all others, at 360 px too', async () => {
    const user = await signUp();
    const other = await call('POST', '/app/v1/auth/sign-in', {
      body: { email: user.email, password: user.password },
      headers: { 'user-agent': `Other device ${randomUUID().slice(0, 4)}` },
    });
    const third = await call('POST', '/app/v1/auth/sign-in', { body: { email: user.email, password: user.password } });
    const page = await run.tab({ session: user.session });
    await page.goto('/account');
    const rows = page.locator('table.sessions tbody tr');
    await rows.nth(2).waitFor();
    expect(await rows.count()).toBe(3);
    await page.getByText('This session').waitFor();
    await run.screen(page, 'account');

    const otherRow = rows.filter({ hasText: 'Other device' });
    // Under the browser: where it signed in from (it has not been used since, so no activity is shown).
    expect(await otherRow.locator('.session-activity').innerText()).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    await otherRow.getByRole('button', { name: /^Sign out/ }).click();
    await otherRow.getByRole('button', { name: 'Yes' }).click();
    await otherRow.waitFor({ state: 'detached' });
    expect((await call('GET', '/app/v1/auth/account', { token: other.body.session.token })).status).toBe(401);

    await page.getByRole('button', { name: 'Sign out everywhere else' }).click();
    await page.getByRole('button', { name: 'Yes' }).click();
    await page.getByText('1 other session signed out.').waitFor();
    await rows.nth(1).waitFor({ state: 'detached' });
    expect(await rows.count()).toBe(1);
    expect((await call('GET', '/app/v1/auth/account', { token: third.body.session.token })).status).toBe(401);

    const narrow = await run.tab({ session: user.session, width: 360 });
    await narrow.goto('/account');
    await narrow.locator('table.sessions tbody tr').first().waitFor();
    expect(await scrollsSideways(narrow)).toBe(false);
    await run.screen(narrow, 'account-narrow');
  });

  it('showed no console errors and no serious accessibility problems', () => {
    expect(run.problems).toEqual([]);
    expect(Object.keys(run.checked).length).toBeGreaterThanOrEqual(10);
    for (const [name, violations] of Object.entries(run.checked)) expect({ name, violations }).toEqual({ name, violations: [] });
  });
});

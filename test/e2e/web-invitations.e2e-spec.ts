import { randomUUID } from 'node:crypto';
import { Page } from 'playwright-core';
import { call, signUp } from './support/api';
import { BrowserRun, scrollsSideways } from './support/browser-run';
import { waitForMail } from './support/mailbox';

/**
 * Invitations in a real Chromium against the shared cluster (which sends e-mail, so a new account verifies its
 * address before it joins): the link names the workspace, the inviter and the role; sign-up and sign-in carry it
 * through into the workspace; a link that cannot be used says why; "Add member" offers an invitation instead.
 */
const run = new BrowserRun();

beforeAll(() => run.start());
afterAll(() => run.close());

async function ownerWithWorkspace(): Promise<{ session: string; email: string; workspaceId: string; name: string }> {
  const owner = await signUp();
  const name = `Acme ${randomUUID().slice(0, 6)}`;
  const workspace = await call('POST', '/app/v1/workspaces', { token: owner.session, body: { name } });
  expect(workspace.status).toBe(201);
  return { session: owner.session, email: owner.email, workspaceId: workspace.body.id, name };
}

async function invite(owner: { session: string; workspaceId: string }, email: string, role: string): Promise<{ id: string; path: string }> {
  const sent = await call('POST', `/app/v1/workspaces/${owner.workspaceId}/invitations`, { token: owner.session, body: { email, role } });
  expect(sent.status).toBe(201);
  const link = new URL(sent.body.url);
  return { id: sent.body.id, path: `${link.pathname}${link.search}` };
}

async function roleOf(owner: { session: string; workspaceId: string }, email: string): Promise<string | undefined> {
  const members = await call('GET', `/app/v1/workspaces/${owner.workspaceId}/members`, { token: owner.session });
  return members.body.data.find((member: { email: string }) => member.email === email)?.role;
}

async function inWorkspace(page: Page, owner: { workspaceId: string; name: string }): Promise<void> {
  await page.waitForURL('**/decisions');
  const switcher = page.getByLabel('Workspace');
  await switcher.waitFor();
  expect(await switcher.inputValue()).toBe(owner.workspaceId);
  await page.getByRole('option', { name: owner.name }).waitFor({ state: 'attached' });
}

describe('invitations in the browser', () => {
  it('a person without an account opens the link, signs up from it, verifies and lands in the workspace', async () => {
    const owner = await ownerWithWorkspace();
    const email = `new-${randomUUID()}@example.com`;
    const link = await invite(owner, email, 'viewer');

    const page = await run.tab();
    await page.goto(link.path);
    await page.getByText(`Test User invited you to join ${owner.name}.`).waitFor();
    const facts = page.locator('dl.facts');
    const fact = async (term: string) => (await facts.locator('dt', { hasText: term }).locator('xpath=following-sibling::dd[1]').innerText()).trim();
    expect(await fact('Workspace')).toBe(owner.name);
    expect(await fact('Invited by')).toBe(`Test User (${owner.email})`);
    expect(await fact('Role')).toBe('viewer · Viewers see decisions and executions without changing them.');
    expect(await fact('Invited address')).toBe(email);
    await run.screen(page, 'invitation');

    const narrow = await run.tab({ width: 360 });
    await narrow.goto(link.path);
    await narrow.getByRole('link', { name: 'Create an account and join' }).waitFor();
    expect(await scrollsSideways(narrow)).toBe(false);
    await run.screen(narrow, 'invitation-narrow');

    await page.getByRole('link', { name: 'Create an account and join' }).click();
    await page.waitForURL('**/sign-up?invitation=*');
    await page.getByText(`Test User invited ${email} to join the workspace ${owner.name} as viewer.`).waitFor();
    await page.getByText(`Creating the account joins you to ${owner.name} as viewer.`).waitFor();
    const address = page.getByLabel('E-mail');
    await page.waitForFunction((expected) => (globalThis as any).document.querySelector('input[name=email]')?.value === expected, email);
    expect(await address.inputValue()).toBe(email);
    await page.getByLabel('Your name').fill('Nina New');
    await page.getByRole('textbox', { name: /^Password/ }).fill('freshpassword9');
    await run.screen(page, 'invitation-sign-up');
    await page.getByRole('button', { name: 'Create an account' }).click();

    // Where e-mail goes out an unproven address cannot join: the invitation page asks for the code, then joins.
    await page.waitForURL('**/invitations/accept?token=*');
    await page.getByRole('heading', { name: 'Verify your e-mail address' }).waitFor();
    await page.getByRole('button', { name: 'E-mail me a code' }).click();
    const mails = await waitForMail(email, 2);
    expect(mails[0]!.text).toContain(owner.name);
    await page.getByLabel('Verification code').fill(/\b(\d{6})\b/.exec(mails.at(-1)!.text)![1]!);
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
    await inWorkspace(page, owner);
    expect(await roleOf(owner, email)).toBe('viewer');
  });

  it('a person with an account signs in from the link and lands in the workspace', async () => {
    const owner = await ownerWithWorkspace();
    const existing = await signUp();
    const link = await invite(owner, existing.email, 'member');

    const page = await run.tab();
    await page.goto(link.path);
    await page.getByRole('link', { name: 'Sign in and join' }).click();
    await page.waitForURL('**/sign-in?invitation=*');
    await page.getByText(`Signing in joins you to ${owner.name} as member.`).waitFor();
    await page.waitForFunction((expected) => (globalThis as any).document.querySelector('input[name=email]')?.value === expected, existing.email);
    await page.getByRole('textbox', { name: 'Password' }).fill(existing.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await inWorkspace(page, owner);
    expect(await roleOf(owner, existing.email)).toBe('member');

    // The link worked once: opened again, it says so instead of offering a dead "Join".
    const again = await run.tab();
    await again.goto(link.path);
    await again.getByRole('heading', { name: 'This invitation cannot be used' }).waitFor();
    await again.getByText('This invitation was already used.').waitFor();
    expect(await again.getByRole('button', { name: 'Join the workspace' }).count()).toBe(0);
  });

  it('a withdrawn or unknown link says why, and a signed-in account with another address is told which to use', async () => {
    const owner = await ownerWithWorkspace();
    const email = `withdrawn-${randomUUID()}@example.com`;
    const withdrawn = await invite(owner, email, 'member');
    expect((await call('DELETE', `/app/v1/workspaces/${owner.workspaceId}/invitations/${withdrawn.id}`, { token: owner.session })).status).toBe(204);

    const page = await run.tab();
    await page.goto(withdrawn.path);
    await page.getByRole('heading', { name: 'This invitation cannot be used' }).waitFor();
    await page.getByText('This invitation was withdrawn').waitFor();
    await run.screen(page, 'invitation-unusable');
    await page.goto('/invitations/accept?token=inv_tok_never-issued');
    await page.getByText('This link is not known.').waitFor();

    const meant = await invite(owner, `meant-${randomUUID()}@example.com`, 'admin');
    const someoneElse = await signUp();
    const signedIn = await run.tab({ session: someoneElse.session });
    await signedIn.goto(meant.path);
    await signedIn.getByText(`You are signed in as ${someoneElse.email}, but this invitation is for meant-`).waitFor();
    await signedIn.getByRole('button', { name: /^Sign out and continue as meant-/ }).click();
    await signedIn.waitForURL('**/sign-in?invitation=*');
    await signedIn.getByText(/Signing in joins you to .* as admin\./).waitFor();
  });

  it('"Add member" with an address that has no account offers an invitation instead', async () => {
    const owner = await ownerWithWorkspace();
    const email = `nobody-${randomUUID()}@example.com`;
    const page = await run.tab({ session: owner.session, workspace: owner.workspaceId });
    await page.goto('/members');
    const addForm = page.locator('form').filter({ has: page.getByRole('heading', { name: 'Add member' }) });
    await addForm.getByLabel('E-mail').fill(email);
    await addForm.getByLabel('Role').selectOption('viewer');
    await addForm.getByRole('button', { name: 'Add member' }).click();
    await page.getByText(`No account uses ${email} yet.`).waitFor();
    expect(await page.getByText('Something went wrong').count()).toBe(0);
    await run.screen(page, 'members-invite-instead');
    await page.getByRole('button', { name: 'Invite them as viewer instead' }).click();

    const linkField = page.locator('#invitation-link');
    await linkField.waitFor();
    expect(await linkField.inputValue()).toMatch(/\/invitations\/accept\?token=inv_tok_/);
    // The focus moves in an effect after the link is drawn.
    await page.waitForFunction(() => (globalThis as any).document.activeElement?.id === 'invitation-link');
    await page.locator('table.invitations').getByRole('cell', { name: email, exact: true }).waitFor();
    const pending = await call('GET', `/app/v1/workspaces/${owner.workspaceId}/invitations`, { token: owner.session });
    expect(pending.body.data.map((invitation: { email: string; role: string }) => [invitation.email, invitation.role])).toEqual([[email, 'viewer']]);
  });

  it('showed no console errors and no serious accessibility problems', () => {
    expect(run.problems).toEqual([]);
    expect(Object.keys(run.checked).length).toBeGreaterThanOrEqual(10);
    for (const [name, violations] of Object.entries(run.checked)) expect({ name, violations }).toEqual({ name, violations: [] });
  });
});

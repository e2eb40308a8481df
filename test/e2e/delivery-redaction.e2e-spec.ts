import { randomBytes } from 'node:crypto';
import { call, deployedDecision, newWorkspace, runDecision, signUp, triageSchema, uniqueMarker, Workspace } from './support/api';
import { launchChromium, signedInContext, watchProblems } from './support/browser';
import { eventually, Receiver, startReceiver } from './support/deliveries';

/**
 * What a delivery shows of what was sent and answered, through the gateway: a receiver that echoes the
 * workspace secret its request carried, in every spelling a careless framework writes, leaves none of them in
 * what an Admin reads; Members and Viewers read status, timing and sizes but no header, body or content type.
 */
const REDACTED = '[redacted]';
let receiver: Receiver;
let ws: Workspace;
let sessions: Record<'owner' | 'admin' | 'member' | 'viewer', string>;
let token: string;

/** The spellings the receiver echoes the token in, by name. */
function spellings(value: string): Record<string, string> {
  const bytes = Buffer.from(value);
  return {
    plain: value,
    upper: value.toUpperCase(),
    lower: value.toLowerCase(),
    url: encodeURIComponent(value),
    urlLower: encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
    form: new URLSearchParams({ v: value }).toString().slice(2),
    base64: bytes.toString('base64'),
    base64Unpadded: bytes.toString('base64').replace(/=+$/, ''),
    base64url: bytes.toString('base64url'),
    // In the middle of a longer base64 text, one and two bytes off the three-byte grid.
    base64After1: Buffer.concat([randomBytes(31), bytes, randomBytes(20)]).toString('base64'),
    base64After2: Buffer.concat([randomBytes(32), bytes, randomBytes(20)]).toString('base64'),
    firstHalf: value.slice(0, Math.ceil(value.length / 2)),
    secondHalf: value.slice(Math.ceil(value.length / 2)),
  };
}

/** The body the receiver answers: every spelling in JSON with `\/` for slashes (as PHP writes it), and once more in `\u` escapes. */
function echo(value: string): string {
  const unicode = [...value].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  return JSON.stringify(spellings(value)).replace(/\//g, '\\/').replace(/}$/, `,"unicode":"${unicode}"}`);
}

async function joined(role: 'admin' | 'member' | 'viewer'): Promise<string> {
  const user = await signUp();
  const added = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: user.email, role } });
  expect(added.status).toBe(201);
  return user.session;
}

beforeAll(async () => {
  receiver = await startReceiver((request, _index, response) => {
    const sent = (request.headers.authorization ?? '').replace(/^Bearer /, '');
    if (request.headers['x-answer'] === 'gone') {
      response.writeHead(410, { 'content-type': 'text/plain' }).end(`gone, token was ${sent}`);
      return;
    }
    response.writeHead(200, { 'content-type': `application/json; token=${encodeURIComponent(sent)}` }).end(echo(sent));
  });
  ws = await newWorkspace();
  sessions = { owner: ws.session, admin: await joined('admin'), member: await joined('member'), viewer: await joined('viewer') };
  token = `crm/Tok+en/${randomBytes(18).toString('base64url')}`;
  expect((await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/secrets/CRM_TOKEN`, { token: ws.session, body: { value: token } })).status).toBe(201);
});

afterAll(async () => {
  await receiver?.close();
});

/** Runs a decision whose one webhook carries the secret, and waits until its delivery has finished. */
async function finishedDelivery(slug: string, headers: Record<string, string>): Promise<string> {
  await deployedDecision(
    ws,
    slug,
    triageSchema(uniqueMarker(), {
      destinations: [{ key: 'crm', type: 'webhook', url: receiver.url, headers: { Authorization: 'Bearer {{secrets.CRM_TOKEN}}', ...headers } }],
    }),
  );
  const run = await runDecision(ws, slug, { message: 'hello' });
  expect(run.status).toBe(200);
  const deliveryId = run.body.destinations[0].delivery_id as string;
  await eventually(
    async () => {
      const view = (await call('GET', deliveryPath(deliveryId), { token: ws.session })).body;
      return view.status !== 'pending' && view.attempts.length > 0 ? view : null;
    },
    20_000,
    'the delivery to finish',
  );
  return deliveryId;
}

const deliveryPath = (id: string) => `/app/v1/workspaces/${ws.workspaceId}/deliveries/${id}`;

describe('a delivery whose receiver echoed the secret in every spelling', () => {
  let deliveryId: string;
  let sentBody: string;

  beforeAll(async () => {
    deliveryId = await finishedDelivery('echoing', {});
    sentBody = receiver.received.find((request) => request.headers['service-delivery-id'] === deliveryId)!.body;
  });

  it('shows Admins and Owners the answer with none of the spellings in it', async () => {
    for (const role of ['admin', 'owner'] as const) {
      const reply = await call('GET', deliveryPath(deliveryId), { token: sessions[role] });
      expect(reply.status).toBe(200);
      expect(reply.body.bodies_shown).toBe(true);
      expect(reply.body.request).toMatchObject({ method: 'POST', body: sentBody, body_bytes: Buffer.byteLength(sentBody) });
      const [attempt] = reply.body.attempts;
      expect(attempt).toMatchObject({ outcome: 'succeeded', response_status: 200 });
      expect(attempt.response.content_type).toBe(`application/json; token=${REDACTED}`);
      const answer = JSON.parse(attempt.response.body) as Record<string, string>;
      expect(Object.keys(answer)).toEqual([...Object.keys(spellings(token)), 'unicode']);
      for (const [name, value] of Object.entries(answer)) expect([name, value]).toEqual([name, expect.stringContaining(REDACTED)]);
      for (const spelling of Object.values(spellings(token)).filter((value) => value.length < 60)) {
        expect(reply.text).not.toContain(spelling);
        expect(reply.text).not.toContain(spelling.replace(/\//g, '\\/'));
      }
      expect(reply.text).not.toContain(Buffer.from(token).toString('base64').slice(0, 12));
      expect(reply.text.toLowerCase()).not.toContain(token.slice(0, 8).toLowerCase());
      expect(attempt.response.body_bytes).toBe(Buffer.byteLength(attempt.response.body));
    }
  });

  it('shows Members and Viewers its status, timing and sizes, and no header, body or content type', async () => {
    const admin = (await call('GET', deliveryPath(deliveryId), { token: sessions.admin })).body;
    for (const role of ['member', 'viewer'] as const) {
      const reply = await call('GET', deliveryPath(deliveryId), { token: sessions[role] });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({
        id: deliveryId,
        status: 'succeeded',
        attempt_count: 1,
        created_at: admin.created_at,
        completed_at: admin.completed_at,
      });
      expect(reply.body.bodies_shown).toBe(false);
      expect(reply.body.request).toEqual({ method: 'POST', headers: null, body: null, body_bytes: Buffer.byteLength(sentBody) });
      expect(reply.body.attempts).toEqual([
        {
          ...admin.attempts[0],
          response: { content_type: null, body: null, body_bytes: admin.attempts[0].response.body_bytes, truncated: false },
        },
      ]);
      expect(reply.body.attempts[0].duration_ms).toEqual(expect.any(Number));
      expect(reply.text).not.toContain(REDACTED);
      expect(reply.text).not.toContain('decision.completed');
    }
  });
  it('is shown on its page to a Viewer as sizes and a line saying who reads bodies, and to the Owner with the answer redacted', async () => {
    const browser = await launchChromium();
    const problems: string[] = [];
    try {
      const admin = (await call('GET', deliveryPath(deliveryId), { token: sessions.admin })).body;
      const viewer = await (await signedInContext(browser, { ...ws, session: sessions.viewer })).newPage();
      watchProblems(viewer, problems);
      await viewer.goto(`/deliveries/${deliveryId}`);
      await viewer.getByTestId('delivery-bodies-withheld').waitFor();
      expect(await viewer.getByTestId('delivery-bodies-withheld').innerText()).toBe(
        'Headers and bodies are visible to Admins and Owners; you see their sizes.',
      );
      expect(await viewer.getByTestId('delivery-request-size').innerText()).toBe(`Body: ${Buffer.byteLength(sentBody)} bytes`);
      expect(await viewer.getByTestId('delivery-response-size').innerText()).toBe(`Body: ${admin.attempts[0].response.body_bytes} bytes`);
      expect(await viewer.getByTestId('delivery-request-body').count()).toBe(0);
      expect(await viewer.getByTestId('delivery-response-body').count()).toBe(0);
      expect(await viewer.getByText(/^Headers \(/).count()).toBe(0);

      const owner = await (await signedInContext(browser, ws)).newPage();
      watchProblems(owner, problems);
      await owner.goto(`/deliveries/${deliveryId}`);
      const answer = await owner.getByTestId('delivery-response-body').innerText();
      expect(answer).toContain(REDACTED);
      expect(answer.toLowerCase()).not.toContain(token.slice(0, 8).toLowerCase());
      expect(await owner.getByTestId('delivery-bodies-withheld').count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});

describe('a resend', () => {
  it('answers Members with sizes only, and Admins with the bodies', async () => {
    const deliveryId = await finishedDelivery('gone-receiver', { 'X-Answer': 'gone' });
    const failed = (await call('GET', deliveryPath(deliveryId), { token: sessions.admin })).body;
    expect(failed).toMatchObject({ status: 'failed', attempts: [{ outcome: 'gone', response_status: 410 }] });
    expect(failed.attempts[0].response.body).toBe(`gone, token was ${REDACTED}`);

    const byMember = await call('POST', `${deliveryPath(deliveryId)}/resend`, { token: sessions.member });
    expect(byMember.status).toBe(202);
    expect(byMember.body).toMatchObject({ status: 'pending', bodies_shown: false, request: { headers: null, body: null } });
    expect(byMember.body.attempts[0].response).toEqual({
      content_type: null,
      body: null,
      body_bytes: Buffer.byteLength(`gone, token was ${REDACTED}`),
      truncated: false,
    });

    await eventually(
      async () => ((await call('GET', deliveryPath(deliveryId), { token: sessions.admin })).body.status === 'failed' ? true : null),
      20_000,
      'the resent delivery to fail again',
    );
    const byAdmin = await call('POST', `${deliveryPath(deliveryId)}/resend`, { token: sessions.admin });
    expect(byAdmin.status).toBe(202);
    expect(byAdmin.body).toMatchObject({ status: 'pending', bodies_shown: true, request: { body: expect.stringContaining('decision.completed') } });
    expect(byAdmin.body.request.headers).toMatchObject({ authorization: REDACTED, 'x-answer': 'gone' });
  });

  it('is still refused to a Viewer', async () => {
    const reply = await call('POST', `${deliveryPath(`dlv_${'a'.repeat(20)}`)}/resend`, { token: sessions.viewer });
    expect(reply.status).toBe(403);
  });
});

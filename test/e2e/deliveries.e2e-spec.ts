import { Client } from 'pg';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { call, defined, expectError, newWorkspace, opsPort, Workspace } from './support/api';
import { DELIVERY_WINDOW_MS } from './support/cluster';
import { DeliveryPublisher, eventually, Receiver, startReceiver, webhookMessage } from './support/deliveries';

/**
 * Deliveries on the shared cluster (plain http to loopback allowed, the retry schedule scaled to about 5 seconds, the
 * per-workspace window of 600 attempts shortened to DELIVERY_WINDOW_MS), published straight to JetStream as the
 * runner publishes them, received by real HTTP servers.
 */
const stripe = new Stripe('sk_test_unused');
const DELIVERY_OPS = 3;

let publisher: DeliveryPublisher;
const receivers: Receiver[] = [];

beforeAll(async () => {
  publisher = await DeliveryPublisher.open();
});

afterAll(async () => {
  await publisher?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(answer?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

const app = (ws: Workspace, method: string, path: string) => call(method, `/app/v1/workspaces/${ws.workspaceId}${path}`, { token: ws.session });

async function rotate(ws: Workspace): Promise<string> {
  const reply = await app(ws, 'POST', '/signing-secret/rotate');
  expect(reply.status).toBe(201);
  return reply.body.secret;
}

async function settled(ws: Workspace, id: string, status: 'succeeded' | 'failed', timeoutMs = 30_000) {
  return eventually(
    async () => {
      const reply = await app(ws, 'GET', `/deliveries/${id}`);
      return reply.status === 200 && reply.body.status === status ? reply.body : null;
    },
    timeoutMs,
    `delivery ${id} ${status}`,
  );
}

describe('a webhook delivery', () => {
  it('carries the event body, the ids, Service-Signature (verified by stripe) and Standard Webhooks headers (verified by standardwebhooks)', async () => {
    const ws = await newWorkspace();
    const secret = await rotate(ws);
    const target = await receiver();
    const message = webhookMessage(ws.workspaceId, target.url);
    await publisher.publish(message);
    const view = await settled(ws, message.deliveryId, 'succeeded');

    expect(target.received).toHaveLength(1);
    const request = target.received[0]!;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/hook');
    expect(request.body).toBe(message.body);
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      'service-delivery-id': message.deliveryId,
      'service-delivery-attempt': '1',
      'webhook-id': message.deliveryId,
    });
    expect(request.headers['user-agent']).toMatch(/^DecisionService-Webhooks\//);
    const signature = String(request.headers['service-signature']);
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(300);

    const event = stripe.webhooks.constructEvent(request.body, signature, secret);
    expect(event).toMatchObject({ id: message.deliveryId, type: 'decision.completed', livemode: true });
    expect(() => stripe.webhooks.constructEvent(request.body, signature, 'whsec_someoneelse')).toThrow();
    const verified = new Webhook(secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    });
    expect(verified).toEqual(JSON.parse(message.body));

    expect(view).toMatchObject({
      id: message.deliveryId,
      kind: 'webhook',
      url: target.url,
      livemode: true,
      status: 'succeeded',
      sequence: 1,
      attempt_count: 1,
    });
    expect(view.attempts).toEqual([expect.objectContaining({ sequence: 1, attempt: 1, outcome: 'succeeded', response_status: 200, error: null })]);
    expect(view.attempts[0].duration_ms).toEqual(expect.any(Number));
  });

  it('is signed with both secrets while a rotation overlaps, each verifying alone', async () => {
    const ws = await newWorkspace();
    const before = await rotate(ws);
    const after = await rotate(ws);
    const secretView = await app(ws, 'GET', '/signing-secret');
    expect(secretView.status).toBe(200);
    expect(secretView.body.hint).toBe(`whsec_…${after.slice(-4)}`);
    expect(Date.parse(secretView.body.previous_expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000);
    expect(secretView.text).not.toContain(after);

    const target = await receiver();
    const message = webhookMessage(ws.workspaceId, target.url);
    await publisher.publish(message);
    await settled(ws, message.deliveryId, 'succeeded');
    const request = defined(target.received[0]);
    const signature = String(request.headers['service-signature']);
    expect(signature.split(',').filter((part) => part.startsWith('v1='))).toHaveLength(2);
    const swHeaders = {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    };
    for (const secret of [before, after]) {
      expect(stripe.webhooks.constructEvent(request.body, signature, secret).id).toBe(message.deliveryId);
      expect(() => new Webhook(secret).verify(request.body, swHeaders)).not.toThrow();
    }

    // At rest both are sealed under DELIVERY_SECRETS_KEY: neither secret nor its random part is in the delivery schema.
    const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
    await db.connect();
    try {
      const { rows } = await db.query<{ row: string }>(`SELECT t::text AS row FROM delivery.signing_secrets t WHERE workspace_id = $1`, [ws.workspaceId]);
      expect(rows).toHaveLength(2);
      for (const { row } of rows) {
        expect(row).not.toContain('whsec_');
        for (const secret of [before, after]) expect(row).not.toContain(secret.slice('whsec_'.length));
      }
    } finally {
      await db.end();
    }
  });

  it('of kind http keeps its rendered headers, method and body, with ours beside them', async () => {
    const ws = await newWorkspace();
    const secret = await rotate(ws);
    const target = await receiver();
    const message = webhookMessage(ws.workspaceId, `${target.url}?q=1`, {
      kind: 'http',
      method: 'PUT',
      headers: { 'X-Ticket': 'T-42', 'Content-Type': 'text/plain', 'Service-Signature': 'forged' },
      body: 'ticket T-42 refund',
      livemode: false,
    });
    await publisher.publish(message);
    const view = await settled(ws, message.deliveryId, 'succeeded');
    expect(view).toMatchObject({ kind: 'http', livemode: false });
    const request = defined(target.received[0]);
    expect(request).toMatchObject({ method: 'PUT', path: '/hook?q=1', body: 'ticket T-42 refund' });
    expect(request.headers).toMatchObject({ 'x-ticket': 'T-42', 'content-type': 'text/plain', 'service-delivery-id': message.deliveryId });
    // Not JSON, so Stripe's header check alone (constructEvent would also parse the body as an event).
    expect(stripe.webhooks.signature!.verifyHeader(request.body, String(request.headers['service-signature']), secret)).toBe(true);
  });
});

describe('workspaces', () => {
  it('are isolated: a dead receiver of one never holds up another’s deliveries', async () => {
    const [slow, quick] = [await newWorkspace(), await newWorkspace()];
    const dead = await receiver(() => undefined);
    const alive = await receiver();
    const stuck = Array.from({ length: 30 }, () => webhookMessage(slow.workspaceId, dead.url));
    for (const message of stuck) await publisher.publish(message);
    await eventually(async () => dead.received.length >= 8, 15_000, 'the dead receiver holding its workspace’s attempts');
    const flowing = Array.from({ length: 30 }, () => webhookMessage(quick.workspaceId, alive.url));
    for (const message of flowing) await publisher.publish(message);
    await eventually(
      async () => new Set(alive.received.map((r) => r.headers['service-delivery-id'])).size === 30,
      15_000,
      'every delivery of the other workspace',
    );
    // Behind one queue head they would have waited for all 30 stuck deliveries to time out, 10 seconds per round of
    // attempts; here they arrived within the dead receiver's first round or so.
    expect(dead.abandoned).toBeLessThanOrEqual(8);
    expect(dead.received.length).toBeLessThanOrEqual(16);
  });

  it(`receive at most 600 deliveries a window; the rest wait and none is dropped`, async () => {
    const ws = await newWorkspace();
    const target = await receiver();
    const messages = Array.from({ length: 630 }, () => webhookMessage(ws.workspaceId, target.url));
    await Promise.all(messages.map((m) => publisher.publish(m)));
    await eventually(async () => new Set(target.received.map((r) => r.headers['service-delivery-id'])).size === messages.length, 150_000, 'all 630 deliveries');
    expect(new Set(target.received.map((r) => r.headers['service-delivery-id']))).toEqual(new Set(messages.map((m) => m.deliveryId)));
    // Without the cap all 630 would arrive within seconds.
    const arrivals = target.received.map((r) => r.at).sort((a, b) => a - b);
    expect(arrivals[600]! - arrivals[0]!).toBeGreaterThan(DELIVERY_WINDOW_MS / 2);
    // The recorded starts are the moments the window counted: no window's length holds more than 600.
    const starts: number[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await app(ws, 'GET', `/deliveries?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      for (const d of page.body.data) for (const a of d.attempts) starts.push(Date.parse(a.started_at));
      cursor = page.body.next_cursor;
    } while (cursor);
    starts.sort((a, b) => a - b);
    expect(starts).toHaveLength(630);
    for (let i = 600; i < starts.length; i++) expect(starts[i]! - starts[i - 600]!).toBeGreaterThanOrEqual(DELIVERY_WINDOW_MS);
    const metrics = (await call('GET', '/metrics', {}, `http://127.0.0.1:${opsPort(DELIVERY_OPS)}`)).text;
    expect(Number(/^decision_service_delivery_throttled_total\{[^}]*\} (\d+)/m.exec(metrics)?.[1] ?? 0)).toBeGreaterThan(0);
  }, 200_000);
});

describe('the application', () => {
  it('lists a workspace’s and a decision’s deliveries with their attempts, paged, and keeps other workspaces out', async () => {
    const ws = await newWorkspace();
    const target = await receiver();
    const messages = [
      webhookMessage(ws.workspaceId, target.url, { decisionId: 'dec_aaaaaaaaaaaaaaaaaaaa' }),
      webhookMessage(ws.workspaceId, target.url, { decisionId: 'dec_bbbbbbbbbbbbbbbbbbbb' }),
      webhookMessage(ws.workspaceId, target.url, { decisionId: 'dec_aaaaaaaaaaaaaaaaaaaa' }),
    ] as const;
    for (const message of messages) {
      await publisher.publish(message);
      await settled(ws, message.deliveryId, 'succeeded');
    }
    const page = await app(ws, 'GET', '/deliveries?limit=2');
    expect(page.status).toBe(200);
    expect(page.body.data.map((d: any) => d.id)).toEqual([messages[2].deliveryId, messages[1].deliveryId]);
    expect(page.body.has_more).toBe(true);
    expect(page.body.data[0].attempts).toHaveLength(1);
    const rest = await app(ws, 'GET', `/deliveries?limit=2&cursor=${page.body.next_cursor}`);
    expect(rest.body.data.map((d: any) => d.id)).toEqual([messages[0].deliveryId]);
    const forDecision = await app(ws, 'GET', '/decisions/dec_aaaaaaaaaaaaaaaaaaaa/deliveries?status=succeeded');
    expect(forDecision.body.data.map((d: any) => d.id)).toEqual([messages[2].deliveryId, messages[0].deliveryId]);
    expect((await app(ws, 'GET', '/deliveries?status=failed')).body.data).toEqual([]);
    expectError(await app(ws, 'GET', '/deliveries?limit=0'), 400, 'INVALID_REQUEST');
    expectError(await app(ws, 'GET', '/deliveries?status=lost'), 400, 'INVALID_REQUEST');
    expectError(await app(ws, 'GET', '/deliveries?cursor=bogus'), 400, 'INVALID_REQUEST');

    const stranger = await newWorkspace();
    expectError(await app(stranger, 'GET', `/deliveries/${messages[0].deliveryId}`), 404, 'NOT_FOUND');
    expectError(await call('GET', `/app/v1/workspaces/${ws.workspaceId}/deliveries`, { token: stranger.session }), 403, 'FORBIDDEN');
    expectError(await call('GET', `/app/v1/workspaces/${ws.workspaceId}/deliveries`, { token: ws.apiKey }), 403, 'FORBIDDEN');
    expectError(await app(stranger, 'GET', '/signing-secret'), 404, 'NOT_FOUND');
  });

  it('exposes delivery metrics a platform team alerts on, without workspace labels', async () => {
    const metrics = (await call('GET', '/metrics', {}, `http://127.0.0.1:${opsPort(DELIVERY_OPS)}`)).text;
    for (const name of [
      'decision_service_deliveries_total',
      'decision_service_delivery_attempts_total',
      'decision_service_delivery_attempt_duration_seconds_bucket',
      'decision_service_delivery_consumer_pending',
      'decision_service_delivery_oldest_pending_age_seconds',
      'decision_service_delivery_throttled_total',
    ]) {
      expect(metrics).toMatch(new RegExp(`^${name}[{ ]`, 'm'));
    }
    expect(metrics).toMatch(/^decision_service_delivery_consumer_pending\{[^}]*state="undelivered"[^}]*\} \d+/m);
    expect(metrics).not.toMatch(/^decision_service_deliver[^\n]*workspace/m);
  });
});

// Each of these waits out real delays (the scaled schedule, Retry-After, the 10-second timeout) in a workspace and
// receiver of its own, so they run side by side, from the start of the file on, while the tests above run.
describe('retries', () => {
  it.concurrent('make 6 attempts on the scaled schedule, then the delivery fails; a resend starts a new sequence under the same id', async () => {
    const ws = await newWorkspace();
    let healthy = false;
    const target = await receiver((_r, _i, response) => response.writeHead(healthy ? 200 : 500).end());
    const message = webhookMessage(ws.workspaceId, target.url);
    await publisher.publish(message);
    const failed = await settled(ws, message.deliveryId, 'failed');
    expect(target.received).toHaveLength(6);
    expect(target.received.map((r) => r.headers['service-delivery-attempt'])).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(new Set(target.received.map((r) => r.headers['service-delivery-id']))).toEqual(new Set([message.deliveryId]));
    expect(failed.attempts.map((a: any) => [a.attempt, a.outcome, a.response_status])).toEqual([1, 2, 3, 4, 5, 6].map((n) => [n, 'failed', 500]));
    // The scaled schedule's gaps grow: the last is the longest.
    const gaps = target.received.slice(1).map((r, i) => r.at - target.received[i]!.at);
    expect(gaps[4]).toBeGreaterThan(gaps[0]!);

    healthy = true;
    const resent = await app(ws, 'POST', `/deliveries/${message.deliveryId}/resend`);
    expect(resent.status).toBe(202);
    expect(resent.body).toMatchObject({ id: message.deliveryId, status: 'pending', sequence: 2 });
    const done = await settled(ws, message.deliveryId, 'succeeded');
    expect(done).toMatchObject({ sequence: 2, attempt_count: 1 });
    expect(done.attempts).toHaveLength(7);
    expect(done.attempts[6]).toMatchObject({ sequence: 2, attempt: 1, outcome: 'succeeded', response_status: 200 });
    expect(target.received).toHaveLength(7);
    expect(target.received[6]!.headers).toMatchObject({
      'service-delivery-id': message.deliveryId,
      'webhook-id': message.deliveryId,
      'service-delivery-attempt': '1',
    });

    expectError(await app(ws, 'POST', `/deliveries/${message.deliveryId}/resend`), 409, 'CONFLICT');
    expectError(await app(ws, 'POST', `/deliveries/dlv_00000000000000000000/resend`), 404, 'NOT_FOUND');
  });

  it.concurrent('wait at least what Retry-After asks, within its cap', async () => {
    const ws = await newWorkspace();
    /** A receiver refusing the first attempt with `status` and Retry-After, once its delivery has succeeded. */
    const deliveredAfterRefusal = async (status: number, retryAfter: string) => {
      const target = await receiver((_r, index, response) =>
        index === 0 ? response.writeHead(status, { 'retry-after': retryAfter }).end() : response.writeHead(200).end(),
      );
      const message = webhookMessage(ws.workspaceId, target.url);
      await publisher.publish(message);
      await settled(ws, message.deliveryId, 'succeeded');
      return target;
    };
    const target = await deliveredAfterRefusal(503, '2');
    expect(target.received).toHaveLength(2);
    // The scaled schedule alone would retry after about a millisecond.
    expect(target.received[1]!.at - target.received[0]!.at).toBeGreaterThanOrEqual(1_900);

    const capped = await deliveredAfterRefusal(429, '86400');
    expect(capped.received).toHaveLength(2);
  });

  it.concurrent('treat a redirect as a failure and never follow it', async () => {
    const ws = await newWorkspace();
    const elsewhere = await receiver();
    const target = await receiver((_r, _i, response) => response.writeHead(307, { location: elsewhere.url }).end());
    const message = webhookMessage(ws.workspaceId, target.url);
    await publisher.publish(message);
    const view = await settled(ws, message.deliveryId, 'failed');
    expect(view.attempts).toHaveLength(6);
    expect(view.attempts[0]).toMatchObject({ outcome: 'failed', response_status: 307 });
    expect(view.attempts[0].error).toMatch(/redirect/);
    expect(elsewhere.received).toHaveLength(0);
  });

  it.concurrent('stop at 410 Gone', async () => {
    const ws = await newWorkspace();
    const target = await receiver((_r, _i, response) => response.writeHead(410).end());
    const message = webhookMessage(ws.workspaceId, target.url);
    await publisher.publish(message);
    const view = await settled(ws, message.deliveryId, 'failed');
    expect(view.attempts).toEqual([expect.objectContaining({ attempt: 1, outcome: 'gone', response_status: 410 })]);
    expect(target.received).toHaveLength(1);
  });

  it.concurrent(
    'give up on an attempt after 10 seconds and try again',
    async () => {
      const ws = await newWorkspace();
      const target = await receiver((_r, index, response) => {
        if (index > 0) response.writeHead(200).end();
      });
      const message = webhookMessage(ws.workspaceId, target.url);
      await publisher.publish(message);
      const view = await settled(ws, message.deliveryId, 'succeeded', 45_000);
      expect(view.attempts.map((a: any) => a.outcome)).toEqual(['timeout', 'succeeded']);
      expect(view.attempts[0].duration_ms).toBeGreaterThanOrEqual(10_000);
      expect(view.attempts[0].error).toMatch(/10000 ms/);
      expect(target.abandoned).toBe(1);
    },
    60_000,
  );
});

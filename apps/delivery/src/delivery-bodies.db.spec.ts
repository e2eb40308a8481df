import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { DeliveryMessage } from '@ds/contracts';
import { createLogger } from '@ds/platform';
import { singleKeyring } from '@ds/sealing';
import { REDACTED } from '@ds/webhooks';
import { DeliveryConfig } from './config';
import { DeliveriesStore } from './deliveries.store';
import { makeAttempt } from './delivery-worker';
import { DeliveryHandlers } from './delivery.handlers';
import { delivery } from './main';
import { DeliveryPurge } from './purge';
import { Sender } from './sender';
import { SigningSecretsService } from './signing-secrets.service';
import { WorkspaceSecretsService } from './workspace-secrets.service';
import { deliveryId, Receiver, startReceiver, webhookMessage } from '../../../test/e2e/support/deliveries';
import { MigratedDatabase, migratedDatabase } from '../../../test/support/service-database';

/**
 * The request and the answers a delivery keeps, against a real PostgreSQL with the service's migrations and a
 * real HTTP receiver on loopback: attempts made as the worker makes them, recorded as it records them.
 */
const logger = createLogger('delivery', 'silent');
let database: MigratedDatabase;
let db: DataSource;
let store: DeliveriesStore;
let signing: SigningSecretsService;
let workspaceSecrets: WorkspaceSecretsService;
let receiver: Receiver;
const sender = new Sender({ allowPrivateTargets: true, timeoutMs: 2_000 });

beforeAll(async () => {
  database = await migratedDatabase('delivery_bodies', delivery.database, 4);
  db = database.dataSource;
  store = new DeliveriesStore(db);
  const config = { secretsKeys: singleKeyring(randomBytes(32)), secretsKeyIsDev: false } as DeliveryConfig;
  signing = new SigningSecretsService(db, config, logger);
  workspaceSecrets = new WorkspaceSecretsService(db, config, logger);
  receiver = await startReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await database?.drop();
});

/** The spellings a careless receiver echoes a value in (JSON strings, `\/` and `\u` escapes, come from the body it writes). */
function echoedSpellings(value: string): Record<string, string> {
  return {
    plain: value,
    url: encodeURIComponent(value),
    form: new URLSearchParams({ v: value }).toString().slice(2),
    base64: Buffer.from(value).toString('base64'),
    base64url: Buffer.from(value).toString('base64url'),
    upper: value.toUpperCase(),
    first: value.slice(0, Math.ceil(value.length / 2)),
    second: value.slice(Math.ceil(value.length / 2)),
  };
}

/** Records the delivery, makes one attempt at it and records the outcome, as the worker does. */
async function attemptOnce(message: DeliveryMessage): Promise<void> {
  await store.record(message);
  const begun = (await store.beginAttempt(message.deliveryId, 1))!;
  const result = await makeAttempt({ sender, workspaceSecrets, logger }, message, begun.attempt, Date.now(), await signing.signing(message.workspaceId));
  await store.finishAttempt(begun.attemptId, message.deliveryId, 1, result, {
    status: result.outcome === 'succeeded' ? 'succeeded' : 'pending',
    nextAttemptAt: null,
  });
}

describe('a delivery’s request and answers', () => {
  it('keep the body sent, the headers without secrets, and each answer’s status, content type and body, redacted where it echoed them', async () => {
    const ws = `ws_${randomUUID()}`;
    const token = `tok-${randomUUID()}`;
    await workspaceSecrets.put(ws, 'CRM_TOKEN', token);
    const message = webhookMessage(ws, receiver.url, {
      headers: { 'content-type': 'application/json', authorization: 'Bearer {{secrets.CRM_TOKEN}}', 'x-team': 'ops' },
    });
    // The receiver echoes what it was sent, as a careless one would: the secret and the signature included.
    receiver.answer = (request, _index, response) =>
      response.writeHead(202, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          received: JSON.parse(request.body).id,
          authorization: request.headers.authorization,
          signature: request.headers['service-signature'],
          webhook: request.headers['webhook-signature'],
        }),
      );
    await attemptOnce(message);
    expect(receiver.received.at(-1)!.headers.authorization).toBe(`Bearer ${token}`);

    const view = (await store.get(ws, message.deliveryId))!;
    expect(view.bodies_shown).toBe(true);
    expect(view.request).toEqual({
      method: 'POST',
      body: message.body,
      body_bytes: Buffer.byteLength(message.body),
      headers: expect.objectContaining({ authorization: REDACTED, 'x-team': 'ops', 'service-signature': REDACTED, 'webhook-signature': REDACTED }),
    });
    const [attempt] = view.attempts;
    expect(attempt).toMatchObject({ outcome: 'succeeded', response_status: 202, response: { content_type: 'application/json', truncated: false } });
    const answered = JSON.parse(attempt!.response!.body!);
    expect(answered).toEqual({ received: message.deliveryId, authorization: `Bearer ${REDACTED}`, signature: expect.any(String), webhook: expect.any(String) });
    expect(answered.signature).not.toMatch(/[0-9a-f]{64}/);
    expect(answered.webhook).not.toMatch(/v1,[A-Za-z0-9+/]{40}/);

    // Nothing secret anywhere in the service's rows.
    const rows = JSON.stringify(
      await db.query(`SELECT d.*, a.* FROM deliveries d JOIN delivery_attempts a ON a.delivery_id = d.id WHERE d.id = $1`, [message.deliveryId]),
    );
    expect(rows).not.toContain(token);
    for (const secret of await signing.signing(ws)) expect(rows).not.toContain(secret);
    // Lists carry neither the request nor the answers.
    const listed = (await store.list({ workspaceId: ws, limit: 10, cursor: null, decisionId: null, status: null })).data[0]!;
    expect(listed).not.toHaveProperty('request');
    expect(listed.attempts[0]).not.toHaveProperty('response');
  });

  it('keep nothing of a secret or signing secret the receiver echoed encoded, halved or in its content type', async () => {
    const ws = `ws_${randomUUID()}`;
    const token = `crm/Tok+en/${randomBytes(12).toString('base64url')}`;
    await workspaceSecrets.put(ws, 'CRM_TOKEN', token);
    const [signingSecret] = await signing.signing(ws);
    const message = webhookMessage(ws, receiver.url, { headers: { 'content-type': 'application/json', authorization: 'Bearer {{secrets.CRM_TOKEN}}' } });
    receiver.answer = (request, _index, response) => {
      const sent = request.headers.authorization!.slice('Bearer '.length);
      const unicode = [...sent].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
      // Every slash escaped as `\/`, as PHP's json_encode writes it, and the value once more in `\u` escapes.
      const body = JSON.stringify({ ...echoedSpellings(sent), signing: Buffer.from(signingSecret!).toString('base64') })
        .replace(/\//g, '\\/')
        .replace(/}$/, `,"unicode":"${unicode}"}`);
      response.writeHead(200, { 'content-type': `application/json; echo=${encodeURIComponent(sent)}` }).end(body);
    };
    await attemptOnce(message);
    const [attempt] = (await store.get(ws, message.deliveryId))!.attempts;
    const kept = `${attempt!.response!.content_type} ${attempt!.response!.body}`;
    expect(attempt!.response!.content_type).toBe(`application/json; echo=${REDACTED}`);
    for (const spelling of [...Object.values(echoedSpellings(token)), Buffer.from(signingSecret!).toString('base64').slice(0, 40)]) {
      expect(kept).not.toContain(spelling);
      expect(kept).not.toContain(spelling.replace(/\//g, '\\/'));
    }
    expect(JSON.parse(attempt!.response!.body!)).toEqual(
      Object.fromEntries(
        ['plain', 'url', 'form', 'base64', 'base64url', 'upper', 'first', 'second', 'signing', 'unicode'].map((key) => [
          key,
          expect.stringContaining(REDACTED),
        ]),
      ),
    );
  });

  it('are read through the service only when the caller may read bodies; otherwise status, timing and sizes', async () => {
    const ws = `ws_${randomUUID()}`;
    receiver.answer = (_request, _index, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('answered ✓');
    const message = webhookMessage(ws, receiver.url);
    await attemptOnce(message);
    // The handlers' get reads the store alone; resend, which publishes, is not called here.
    const handlers = new DeliveryHandlers(store, signing, workspaceSecrets, undefined as never);
    const shown = await handlers.get({ workspaceId: ws, deliveryId: message.deliveryId, bodies: true });
    expect(shown.bodies_shown).toBe(true);
    expect(shown.attempts[0]!.response).toEqual({ content_type: 'text/plain', body: 'answered ✓', body_bytes: 12, truncated: false });
    for (const bodies of [false, undefined]) {
      const withheld = await handlers.get({ workspaceId: ws, deliveryId: message.deliveryId, bodies });
      expect(withheld).toEqual({
        ...shown,
        bodies_shown: false,
        request: { method: 'POST', headers: null, body: null, body_bytes: Buffer.byteLength(message.body) },
        attempts: [{ ...shown.attempts[0], response: { content_type: null, body: null, body_bytes: 12, truncated: false } }],
      });
    }
  });

  it('keep the first 8 KiB of a long answer marked truncated, and no answer for an attempt that got none', async () => {
    const ws = `ws_${randomUUID()}`;
    receiver.answer = (_request, _index, response) => response.writeHead(500, { 'content-type': 'text/plain' }).end('e'.repeat(200_000));
    const long = webhookMessage(ws, receiver.url);
    await attemptOnce(long);
    const [attempt] = (await store.get(ws, long.deliveryId))!.attempts;
    expect(attempt).toMatchObject({ outcome: 'failed', response_status: 500, response: { content_type: 'text/plain', truncated: true } });
    expect(attempt!.response!.body).toBe('e'.repeat(8 * 1024));

    const closed = await startReceiver();
    await closed.close();
    const unanswered = webhookMessage(ws, closed.url);
    await attemptOnce(unanswered);
    expect((await store.get(ws, unanswered.deliveryId))!.attempts).toEqual([expect.objectContaining({ outcome: 'network', response: null })]);
  });

  it('go with their delivery at the end of retention and when the workspace is deleted', async () => {
    receiver.answer = (_request, _index, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('kept until purged');
    const ws = `ws_${randomUUID()}`;
    const old = webhookMessage(ws, receiver.url, { createdAt: new Date(Date.now() - 31 * 86_400_000).toISOString() });
    const recent = webhookMessage(ws, receiver.url);
    await attemptOnce(old);
    await attemptOnce(recent);
    const bodies = async (id: string) =>
      (
        (await db.query(`SELECT count(*)::int AS count FROM delivery_attempts WHERE delivery_id = $1 AND response_body IS NOT NULL`, [id])) as Array<{
          count: number;
        }>
      )[0]!.count;
    expect([await bodies(old.deliveryId), await bodies(recent.deliveryId)]).toEqual([1, 1]);
    await new DeliveryPurge(store, signing, 0, logger).purge();
    expect([await bodies(old.deliveryId), await bodies(recent.deliveryId)]).toEqual([0, 1]);
    expect(await store.get(ws, old.deliveryId)).toBeNull();
    await store.purgeWorkspace(ws);
    expect(await bodies(recent.deliveryId)).toBe(0);
    expect(await store.get(ws, recent.deliveryId)).toBeNull();
  });

  it('are shown for attempts made before answers were kept as none', async () => {
    const ws = `ws_${randomUUID()}`;
    const earlier = webhookMessage(ws, receiver.url, { deliveryId: deliveryId() });
    await store.record(earlier);
    const begun = (await store.beginAttempt(earlier.deliveryId, 1))!;
    // As a replica of the earlier version records it: a status and no answer.
    await store.finishAttempt(
      begun.attemptId,
      earlier.deliveryId,
      1,
      { outcome: 'succeeded', responseStatus: 200, durationMs: 5, error: null },
      {
        status: 'succeeded',
        nextAttemptAt: null,
      },
    );
    expect((await store.get(ws, earlier.deliveryId))!.attempts).toEqual([expect.objectContaining({ response_status: 200, response: null })]);
  });
});

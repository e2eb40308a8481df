import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NatsConnection } from 'nats';
import { DELIVERY_STREAM, NATS_PERMISSIONS, SERVICE_NAMES, SUBJECTS, ServiceName, WorkspaceDeletedEvent } from '@ds/contracts';
import { createLogger, Metrics, NatsLink, publishWorkspaceDeleted, RpcClient, WorkspaceDeletions } from '@ds/platform';
import { freePort, portIsFree, ROOT, waitFor } from './support/cluster';

const password = (service: ServiceName) => `pw-${service}-${process.pid}`;
const quoted = (subjects: string[]) => `[${subjects.map((subject) => JSON.stringify(subject)).join(', ')}]`;

/** The same authorization block the chart renders (templates/_helpers.tpl), from the same lists. */
function authorizationBlock(): string {
  const users = SERVICE_NAMES.map(
    (service) => `{ user: "${service}", password: "${password(service)}", permissions: {
      publish: { allow: ${quoted(NATS_PERMISSIONS[service].publish)} }
      subscribe: { allow: ${quoted(NATS_PERMISSIONS[service].subscribe)} }
      allow_responses: true } }`,
  );
  return `authorization { users = [\n${users.join('\n')}\n] }`;
}

/**
 * A real nats-server configured with one user per service: the calls each service makes go through,
 * the delivery service declares its stream, and a service reaching for another's subject is refused.
 */
describe('NATS users limited to their subjects', () => {
  const logger = createLogger('test', 'silent');
  let server: ChildProcess;
  let dir: string;
  let url: string;
  const links: NatsLink[] = [];

  async function linkAs(service: ServiceName): Promise<NatsLink> {
    const link = await NatsLink.open(url, service, logger, { user: service, password: password(service), tls: null });
    links.push(link);
    return link;
  }

  async function as(service: ServiceName): Promise<NatsConnection> {
    return (await linkAs(service)).connection;
  }

  /** The error the server answers a subscription with, once it has seen it. */
  async function subscriptionRefusal(connection: NatsConnection, subject: string): Promise<unknown> {
    let refusal: unknown = null;
    connection.subscribe(subject, { callback: (error) => (refusal ??= error) });
    await connection.flush();
    await waitFor(async () => refusal !== null, 5_000, `the server to refuse ${subject}`);
    return refusal;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ds-e2e-nats-auth-'));
    const port = await freePort();
    url = `nats://127.0.0.1:${port}`;
    writeFileSync(join(dir, 'nats.conf'), `listen: 127.0.0.1:${port}\njetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }\n${authorizationBlock()}\n`);
    server = spawn('nats-server', ['-c', join(dir, 'nats.conf')], { stdio: 'ignore' });
    await waitFor(async () => !(await portIsFree(port)), 10_000, 'nats-server');
  });

  afterAll(async () => {
    await Promise.all(links.map((link) => link.close()));
    server?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('a wrong password is refused', async () => {
    await expect(NatsLink.open(url, 'gateway', logger, { user: 'gateway', password: 'wrong', tls: null })).rejects.toThrow(/cannot reach NATS/);
  });

  it('lets each service make its calls and answer its own subjects', async () => {
    const [gateway, runner, engine, billing] = await Promise.all([as('gateway'), as('decision-runner'), as('engine-proxy'), as('billing-ledger')]);
    engine.subscribe(SUBJECTS.engine.answer, { queue: 'engine-proxy', callback: (_error, message) => message.respond('answered') });
    runner.subscribe(SUBJECTS.runner.run, { queue: 'decision-runner', callback: (_error, message) => message.respond('ran') });
    runner.subscribe(SUBJECTS.runner.executionOutcomes, { queue: 'decision-runner', callback: (_error, message) => message.respond('outcomes') });
    await Promise.all([engine.flush(), runner.flush()]);
    expect((await gateway.request(SUBJECTS.runner.run, '', { timeout: 2_000 })).string()).toBe('ran');
    expect((await runner.request(SUBJECTS.engine.answer, '', { timeout: 2_000 })).string()).toBe('answered');
    expect((await billing.request(SUBJECTS.runner.executionOutcomes, '', { timeout: 2_000 })).string()).toBe('outcomes');
  });

  it('lets the delivery service declare its stream and the runner publish deliveries to it', async () => {
    const delivery = await as('delivery');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the built service code, as it runs
    const { declareDeliveryStream } = require(
      join(ROOT, 'dist', 'apps', 'delivery', 'src', 'jetstream.js'),
    ) as typeof import('../../apps/delivery/src/jetstream');
    const manager = await declareDeliveryStream(delivery);
    const runner = await as('decision-runner');
    const ack = await runner.jetstream().publish(DELIVERY_STREAM.subjectFor('ws-1'), 'payload');
    expect(ack.stream).toBe(DELIVERY_STREAM.name);
    expect((await manager.streams.info(DELIVERY_STREAM.name)).state.messages).toBe(1);
  });

  it('lets the delivery service update its consumer, take, retry and resend deliveries, and answer the gateway', async () => {
    const delivery = await as('delivery');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the built service code, as it runs
    const { declareDeliveryStream } = require(
      join(ROOT, 'dist', 'apps', 'delivery', 'src', 'jetstream.js'),
    ) as typeof import('../../apps/delivery/src/jetstream');
    // A second declaration updates the existing consumer's settings.
    const manager = await declareDeliveryStream(delivery);
    expect((await manager.consumers.info(DELIVERY_STREAM.name, DELIVERY_STREAM.consumer)).config.max_deliver).toBe(-1);
    const resend = await delivery.jetstream().publish(DELIVERY_STREAM.subjectFor('ws-2'), 'resent', { msgID: DELIVERY_STREAM.resendMsgId('dlv_x', 2) });
    expect(resend.stream).toBe(DELIVERY_STREAM.name);
    const consumer = await delivery.jetstream().consumers.get(DELIVERY_STREAM.name, DELIVERY_STREAM.consumer);
    const taken = await consumer.next({ expires: 5_000 });
    expect(taken).not.toBeNull();
    taken!.working();
    taken!.nak(10);
    const again = await consumer.next({ expires: 5_000 });
    expect(again).not.toBeNull();
    again!.ack();

    delivery.subscribe(SUBJECTS.delivery.list, { queue: 'delivery', callback: (_error, message) => message.respond('listed') });
    await delivery.flush();
    const gateway = await as('gateway');
    expect((await gateway.request(SUBJECTS.delivery.list, '', { timeout: 2_000 })).string()).toBe('listed');
  });

  it('lets every owner consume workspace deletions the partner service publishes', async () => {
    const owners: ServiceName[] = ['gateway', 'decision-runner', 'engine-proxy', 'delivery', 'partner'];
    const received = new Map<ServiceName, string[]>(owners.map((service) => [service, []]));
    const consumers = await Promise.all(
      owners.map(async (service) => {
        const consumer = new WorkspaceDeletions(
          await as(service),
          service,
          async (event: WorkspaceDeletedEvent) => void received.get(service)!.push(event.workspaceId),
          logger,
        );
        await consumer.start();
        return consumer;
      }),
    );
    const partner = await as('partner');
    await publishWorkspaceDeleted(partner, { workspaceId: 'ws-deleted-1', partnerWorkspaceId: 'ws-partner', deletedAt: new Date().toISOString() });
    await waitFor(async () => owners.every((service) => received.get(service)!.length > 0), 10_000, 'every owner to receive the deletion');
    expect(Object.fromEntries(received)).toEqual(Object.fromEntries(owners.map((service) => [service, ['ws-deleted-1']])));
    await Promise.all(consumers.map((consumer) => consumer.stop()));
    // Only the partner service announces deletions.
    const runner = await as('decision-runner');
    await expect(publishWorkspaceDeleted(runner, { workspaceId: 'ws-2', partnerWorkspaceId: 'p', deletedAt: '' })).rejects.toThrow();
  });

  it("answers each service's calls in its own inboxes, and refuses a service reading another's", async () => {
    const runner = await as('decision-runner');
    runner.subscribe(SUBJECTS.runner.listDecisions, {
      queue: 'decision-runner',
      callback: (_error, message) => message.respond(JSON.stringify({ response: { body: '{}', billable: false } })),
    });
    await runner.flush();
    const gateway = await linkAs('gateway');
    expect(gateway.inboxPrefix).toBe('_INBOX.gateway');
    const rpc = new RpcClient(gateway, new Metrics('gateway'));
    await expect(rpc.call(SUBJECTS.runner.listDecisions, {} as never, { timeoutMs: 2_000 })).resolves.toEqual({ body: '{}', billable: false });
    // Answers to the runner's calls, and everybody's, are out of the gateway's reach.
    expect(await subscriptionRefusal(gateway.connection, '_INBOX.decision-runner.>')).toMatchObject({ code: 'PERMISSIONS_VIOLATION' });
    expect(await subscriptionRefusal(gateway.connection, '_INBOX.>')).toMatchObject({ code: 'PERMISSIONS_VIOLATION' });
  });

  it("refuses a service reaching for another service's subject", async () => {
    const gateway = await as('gateway');
    // The gateway never calls the engine or reserves billing; only the runner does.
    await expect(gateway.request(SUBJECTS.engine.answer, '', { timeout: 2_000 })).rejects.toMatchObject({ code: 'PERMISSIONS_VIOLATION' });
    const partner = await as('partner');
    await expect(partner.request(SUBJECTS.billing.reserve, '', { timeout: 2_000 })).rejects.toMatchObject({ code: 'PERMISSIONS_VIOLATION' });
  });
});

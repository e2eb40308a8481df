import { Controller, INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { headers as natsHeaders, JSONCodec } from 'nats';
import pino from 'pino';
import { Writable } from 'node:stream';
import { DEADLINE_HEADER, rpcSubject, ServiceError } from '@ds/contracts';
import { Metrics, NatsLink, OutcomeUnknown, RequestTooLarge, RpcClient, SharedConnectionNatsServer, WireErrorFilter } from '@ds/platform';
import { call, deployedDecision, Reply, opsPort, runDecision, triageSchema, Workspace, roomyWorkspace } from './support/api';
import { NatsServer, startNats } from './support/cluster';

/**
 * Answers a Member can inflate (a reply destination repeating a large state value, pages of executions
 * carrying mapped values) never reach NATS's max_payload, and an answer that would is turned into an error
 * answer by the transport instead of ending the process.
 */

const MAX_PAYLOAD = 64 * 1024;
let handled = 0;

/** The probe's subjects, declared as services declare theirs in @ds/contracts. */
const PROBE = {
  echoSize: rpcSubject<{ size: number; padding?: string }, { text: string }>('probe.echo-size'),
  slow: rpcSubject<{ ms: number }, { done: true }>('probe.slow'),
  refuse: rpcSubject<{ issues: number }, never>('probe.refuse'),
};

@Controller()
class ProbeHandlers {
  @MessagePattern('probe.echo-size')
  echoSize(@Payload() request: { size: number }) {
    handled++;
    return { text: 'x'.repeat(request.size) };
  }

  /** A validation that finds an issue per key of a large body, as an outcome of thousands of unknown answers does. */
  @MessagePattern('probe.refuse')
  refuse(@Payload() request: { issues: number }) {
    handled++;
    const issues = Array.from({ length: request.issues }, (_, i) => ({ path: `answers.k${i}`, message: 'is not a question of the version' }));
    throw new ServiceError('INVALID_REQUEST', 'The outcome does not fit.', issues);
  }

  @MessagePattern('probe.slow')
  async slow(@Payload() request: { ms: number }) {
    handled++;
    await new Promise((resolve) => setTimeout(resolve, request.ms));
    return { done: true };
  }
}

@Module({ controllers: [ProbeHandlers] })
class ProbeModule {}

describe('the NATS transport, on a server that carries at most 64 KB', () => {
  let nats: NatsServer;
  let serverLink: NatsLink;
  let clientLink: NatsLink;
  let micro: INestMicroservice;
  let rpc: RpcClient;
  const logLines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    nats = await startNats({ maxPayload: MAX_PAYLOAD });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(
          ...chunk
            .toString()
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line)),
        );
        done();
      },
    });
    const logger = pino({ level: 'info' }, sink);
    [serverLink, clientLink] = await Promise.all([NatsLink.open(nats.url, 'probe-server', logger), NatsLink.open(nats.url, 'probe-client', logger)]);
    micro = await NestFactory.createMicroservice(ProbeModule, { strategy: new SharedConnectionNatsServer(serverLink, 'probe'), logger: false });
    micro.useGlobalFilters(new WireErrorFilter(logger));
    await micro.listen();
    // The subscriptions are sent; a flush returns once the server has them, so the first call finds a responder.
    await serverLink.connection.flush();
    rpc = new RpcClient(clientLink, new Metrics('probe-client'));
  }, 30_000);

  afterAll(async () => {
    await micro?.close();
    await serverLink?.close();
    await clientLink?.close();
    await nats?.stop();
  });

  it('answers an error instead of an answer NATS cannot carry, logs it, and keeps answering', async () => {
    const oversize = rpc.call(PROBE.echoSize, { size: MAX_PAYLOAD * 2 });
    await expect(oversize).rejects.toBeInstanceOf(ServiceError);
    await expect(oversize).rejects.toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringMatching(/too large to send/) });
    // The log names the limit; the answer names neither the bus nor a number.
    expect(((await oversize.catch((error: unknown) => error)) as Error).message).not.toMatch(/NATS|\d/);
    expect(logLines).toContainEqual(
      expect.objectContaining({ msg: expect.stringMatching(/larger than NATS carries/), subject: 'probe.echo-size', max_payload: MAX_PAYLOAD }),
    );
    await expect(rpc.call(PROBE.echoSize, { size: 10 })).resolves.toEqual({ text: 'x'.repeat(10) });
  });

  it('refuses a request NATS cannot carry before publishing it', async () => {
    const before = handled;
    await expect(rpc.call(PROBE.echoSize, { size: 1, padding: 'p'.repeat(MAX_PAYLOAD) })).rejects.toBeInstanceOf(RequestTooLarge);
    const refused = (await rpc.call(PROBE.echoSize, { size: 1, padding: 'p'.repeat(MAX_PAYLOAD) }).catch((error: unknown) => error)) as ServiceError;
    expect(refused).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    expect(refused.message).not.toMatch(/NATS|\d/);
    expect(handled).toBe(before);
  });

  it('carries a refusal of 14,000 issues as 50 of them and the count of the rest, logged as a warning, not an error', async () => {
    const before = logLines.length;
    const refused = (await rpc.call(PROBE.refuse, { issues: 14_000 }).catch((error: unknown) => error)) as ServiceError;
    expect(refused).toMatchObject({
      code: 'INVALID_REQUEST',
      status: 400,
      message: 'The outcome does not fit. The first 50 issues are listed in details; 13,950 more are not.',
    });
    expect(refused.details).toHaveLength(50);
    const lines = logLines.slice(before);
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, msg: 'refused a request with more issues than an error lists', issues: 14_000 }));
    expect(lines.filter((line) => (line.level as number) >= 50)).toEqual([]);
  });

  it('reports a call that timed out as an unknown outcome, with no subject in its message', async () => {
    const slow = rpc.call(PROBE.slow, { ms: 1_500 }, { timeoutMs: 200 });
    await expect(slow).rejects.toBeInstanceOf(OutcomeUnknown);
    await expect(slow).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    const error = (await slow.catch((e: unknown) => e)) as Error;
    expect(error.message).not.toContain('probe.slow');
    expect(logLines).toContainEqual(expect.objectContaining({ msg: 'no answer in time', subject: 'probe.slow' }));
  });

  it('does not run a request whose deadline passed before it arrived', async () => {
    const before = handled;
    const codec = JSONCodec();
    const expired = natsHeaders();
    expired.set(DEADLINE_HEADER, String(Date.now() - 1_000));
    const packet = (ms: number) => codec.encode({ pattern: 'probe.slow', data: { ms }, id: `probe-${ms}` });
    await expect(clientLink.connection.request('probe.slow', packet(1), { timeout: 1_000, headers: expired })).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(handled).toBe(before);
    expect(logLines).toContainEqual(expect.objectContaining({ msg: 'dropped a request whose caller had already stopped waiting', subject: 'probe.slow' }));

    const current = natsHeaders();
    current.set(DEADLINE_HEADER, String(Date.now() + 5_000));
    const answer = await clientLink.connection.request('probe.slow', packet(2), { timeout: 5_000, headers: current });
    expect(codec.decode(answer.data)).toMatchObject({ response: { done: true } });
    expect(handled).toBe(before + 1);
  });
});

describe('answers a Member can inflate', () => {
  const runnerOps = `http://127.0.0.1:${opsPort(1)}`;

  /** Nine replies that repeat `message` 280 times each, and a function that maps it into 30 params. */
  const echoingSchema = () =>
    triageSchema('Echoes.', {
      destinations: [
        ...Array.from({ length: 9 }, (_, i) => ({
          key: `echo_${i}`,
          type: 'reply',
          text: '{{params.m}}'.repeat(280),
          params: { m: { from: 'state.message' } },
        })),
        {
          key: 'fan_out',
          type: 'function',
          function: 'fanOut',
          params: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`p${i}`, { from: 'state.message' }])),
        },
      ],
    });

  async function runnerStillUp(ws: Workspace, slug: string): Promise<void> {
    expect((await call('GET', '/readyz', {}, runnerOps)).status).toBe(200);
    const normal = await runDecision(ws, slug, { message: 'hi' });
    expect(normal.status).toBe(200);
  }

  it('skips with reason limit the destinations whose rendering passes its limit, and the runner stays up', async () => {
    const ws = await roomyWorkspace();
    await deployedDecision(ws, 'echoes', echoingSchema());
    // Rendered in full, each reply would be 280 × 100,000 characters and the function 3 MB of params.
    const reply = await runDecision(ws, 'echoes', { message: 'm'.repeat(100_000) });
    expect(reply.status).toBe(200);
    expect(reply.text.length).toBeLessThan(300_000);
    expect(reply.body.destinations).toEqual([
      ...Array.from({ length: 9 }, (_, i) => ({ key: `echo_${i}`, type: 'reply', status: 'skipped', reason: 'limit' })),
      { key: 'fan_out', type: 'function', status: 'skipped', reason: 'limit' },
    ]);

    const small = await runDecision(ws, 'echoes', { message: 'ab' });
    expect(small.body.destinations[0]).toEqual({ key: 'echo_0', type: 'reply', text: 'ab'.repeat(280) });
    expect(small.body.destinations[9]).toMatchObject({ key: 'fan_out', type: 'function', params: { p0: 'ab', p29: 'ab' } });
    await runnerStillUp(ws, 'echoes');
  });

  it('pages a hundred large executions by bytes as well as count, every one reachable by the cursor', async () => {
    const ws = await roomyWorkspace();
    await deployedDecision(ws, 'echoes', echoingSchema());
    // 14 characters: each reply renders to 3,920, the function's params to about 16,000; about 50 KB an execution.
    const ids: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const replies = await Promise.all(Array.from({ length: 10 }, () => runDecision(ws, 'echoes', { message: 'fourteen chars' })));
      for (const reply of replies) {
        expect(reply.status).toBe(200);
        expect(reply.body.destinations[0].text).toHaveLength(3_920);
        ids.push(reply.body.execution_id);
      }
    }

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Reply = await call('GET', `/v1/executions?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token: ws.apiKey });
      expect(page.status).toBe(200);
      expect(Buffer.byteLength(page.text)).toBeLessThan(512 * 1024);
      expect(page.body.data.length).toBeGreaterThan(0);
      expect(page.body.has_more).toBe(page.body.next_cursor !== null);
      seen.push(...page.body.data.map((execution: { id: string }) => execution.id));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor !== null && pages < 100);
    expect(pages).toBeGreaterThan(1);
    expect(new Set(seen).size).toBe(100);
    expect([...seen].sort()).toEqual([...ids].sort());
    await runnerStillUp(ws, 'echoes');
  }, 120_000);
});

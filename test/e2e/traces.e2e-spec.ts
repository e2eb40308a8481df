import { randomBytes } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { SUBJECTS } from '@ds/contracts';
import { call, triageSchema, uniqueMarker } from './support/api';
import { Cluster, OwnCluster, startOwnCluster, waitFor } from './support/cluster';
import { startReceiver as startHookReceiver } from './support/deliveries';

interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  start: bigint;
  attributes: Record<string, unknown>;
  /** Span ids this span links to (a batch's consumer span links to each message's producer span). */
  links: string[];
}

/** OTLP span kinds. */
const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const CONSUMER = 5;

/** OTLP/JSON ids are hex; some encoders send base64. */
function hexId(value: string | undefined, length: number): string {
  if (!value) return '';
  return new RegExp(`^[0-9a-f]{${length}}$`).test(value) ? value : Buffer.from(value, 'base64').toString('hex');
}

function attributeValue(value: Record<string, unknown>): unknown {
  return value.stringValue ?? value.intValue ?? value.doubleValue ?? value.boolValue;
}

/** An OTLP/HTTP receiver in this process: the services export to it as they would to a collector. */
function startReceiver(): Promise<{ server: Server; url: string; spans: ReceivedSpan[]; contentTypes: Set<string> }> {
  const spans: ReceivedSpan[] = [];
  const contentTypes = new Set<string>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      contentTypes.add(String(request.headers['content-type']));
      if (request.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const resourceSpans of body.resourceSpans ?? []) {
          const service = resourceSpans.resource?.attributes?.find((a: { key: string }) => a.key === 'service.name')?.value?.stringValue;
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({
                service,
                traceId: hexId(span.traceId, 32),
                spanId: hexId(span.spanId, 16),
                parentSpanId: hexId(span.parentSpanId, 16),
                name: span.name,
                kind: span.kind,
                start: BigInt(span.startTimeUnixNano),
                attributes: Object.fromEntries(
                  (span.attributes ?? []).map((a: { key: string; value: Record<string, unknown> }) => [a.key, attributeValue(a.value)]),
                ),
                links: (span.links ?? []).map((link: { spanId: string }) => hexId(link.spanId, 16)),
              });
            }
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, spans, contentTypes })),
  );
}

/**
 * A cluster of its own exporting traces to an in-process OTLP receiver: one run's hops, across the
 * services, arrive as one trace whose spans form a chain of parents and children in the order of the hops.
 */
describe('distributed traces', () => {
  let own: OwnCluster;
  let cluster: Cluster;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    own = await startOwnCluster('traces', {
      // This cluster's engine speaks Anthropic's protocol to the simulator, so that path is run end to end too.
      ENGINE_LLM_PROVIDER: 'anthropic',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      DELIVERY_ALLOW_PRIVATE_TARGETS: 'true',
      DELIVERY_RETRY_SCALE: '0.0002',
    });
    cluster = own.cluster;
  }, 120_000);

  afterAll(async () => {
    await own?.stop();
    await new Promise((resolve) => receiver?.server.close(resolve));
  });

  const api = (method: string, path: string, options = {}) => call(method, path, options, cluster.baseUrl);

  it('shows every hop of one run under the trace id the caller sent, each span the child of the hop before it', async () => {
    const user = await api('POST', '/app/v1/auth/sign-up', { body: { email: `${uniqueMarker()}@example.com`, password: 'correcthorse42', name: 'x' } });
    const session = user.body.session.token;
    const workspace = await api('POST', '/app/v1/workspaces', { token: session, body: { name: 'traced' } });
    const key = await api('POST', `/app/v1/workspaces/${workspace.body.id}/api-keys`, { token: session, body: { name: 'k', mode: 'live' } });
    const decision = await api('POST', `/app/v1/workspaces/${workspace.body.id}/decisions`, {
      token: session,
      body: { slug: 'traced', name: 'traced', schema: triageSchema(uniqueMarker()) },
    });
    expect((await api('POST', `/app/v1/workspaces/${workspace.body.id}/decisions/${decision.body.id}/deploy`, { token: session })).status).toBe(201);

    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const run = await api('POST', '/v1/decisions/traced', {
      token: key.body.key,
      body: { state: { message: 'my parcel is late' } },
      headers: { traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    expect(run.status).toBe(200);

    const ofRun = () => receiver.spans.filter((span) => span.traceId === traceId);
    const named = (service: string, kind: number, name: string) => ofRun().find((span) => span.service === service && span.kind === kind && span.name === name);
    // Spans leave in batches about every second; wait until the engine's own span has arrived.
    await waitFor(
      async () => named('engine-proxy', CLIENT, 'engine anthropic') !== undefined && named('gateway', SERVER, 'POST /v1/decisions/:slug') !== undefined,
      30_000,
      'the run’s spans',
    );

    expect([...receiver.contentTypes]).toContain('application/json');
    const chain = [
      named('gateway', SERVER, 'POST /v1/decisions/:slug'),
      named('gateway', CLIENT, SUBJECTS.runner.run),
      named('decision-runner', SERVER, SUBJECTS.runner.run),
      named('decision-runner', CLIENT, SUBJECTS.engine.answer),
      named('engine-proxy', SERVER, SUBJECTS.engine.answer),
      named('engine-proxy', CLIENT, 'engine anthropic'),
    ];
    expect(chain.map((span) => span && `${span.service} ${span.name}`)).toEqual([
      'gateway POST /v1/decisions/:slug',
      `gateway ${SUBJECTS.runner.run}`,
      `decision-runner ${SUBJECTS.runner.run}`,
      `decision-runner ${SUBJECTS.engine.answer}`,
      `engine-proxy ${SUBJECTS.engine.answer}`,
      'engine-proxy engine anthropic',
    ]);
    expect(chain[0]!.parentSpanId).toBe(callerSpanId);
    for (let i = 1; i < chain.length; i++) {
      expect({ hop: chain[i]!.name, parent: chain[i]!.parentSpanId }).toEqual({ hop: chain[i]!.name, parent: chain[i - 1]!.spanId });
      expect(chain[i]!.start >= chain[i - 1]!.start).toBe(true);
    }

    // The reservation with the ledger and the runner's database work are hops of the same run.
    const reserve = named('billing-ledger', SERVER, SUBJECTS.billing.reserve);
    expect(reserve?.parentSpanId).toBe(named('decision-runner', CLIENT, SUBJECTS.billing.reserve)?.spanId);
    const runnerServer = chain[2]!;
    const runnerQueries = ofRun().filter(
      (span) => span.service === 'decision-runner' && span.name.startsWith('db ') && span.parentSpanId === runnerServer.spanId,
    );
    expect(runnerQueries.length).toBeGreaterThan(0);
    expect(runnerQueries[0]!.attributes['db.system.name']).toBe('postgresql');
    expect(new Set(ofRun().map((span) => span.service))).toEqual(new Set(['gateway', 'decision-runner', 'engine-proxy', 'billing-ledger']));
  }, 90_000);
  it('follows a run through JetStream: each delivery attempt and the settlement join the run’s trace', async () => {
    const hook = await startHookReceiver((_request, index, response) => response.writeHead(index === 0 ? 503 : 200).end());
    try {
      const user = await api('POST', '/app/v1/auth/sign-up', { body: { email: `${uniqueMarker()}@example.com`, password: 'correcthorse42', name: 'x' } });
      const session = user.body.session.token;
      const workspace = await api('POST', '/app/v1/workspaces', { token: session, body: { name: 'traced deliveries' } });
      const key = await api('POST', `/app/v1/workspaces/${workspace.body.id}/api-keys`, { token: session, body: { name: 'k', mode: 'live' } });
      const schema = triageSchema(uniqueMarker(), { destinations: [{ key: 'ops', type: 'webhook', url: hook.url }] });
      const decision = await api('POST', `/app/v1/workspaces/${workspace.body.id}/decisions`, {
        token: session,
        body: { slug: 'traced-hook', name: 'traced hook', schema },
      });
      expect((await api('POST', `/app/v1/workspaces/${workspace.body.id}/decisions/${decision.body.id}/deploy`, { token: session })).status).toBe(201);

      const traceId = randomBytes(16).toString('hex');
      const run = await api('POST', '/v1/decisions/traced-hook', {
        token: key.body.key,
        body: { state: { message: 'my parcel is late' } },
        headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
      });
      expect(run.status).toBe(200);
      expect(run.body.destinations[0].status).toBe('queued');

      const ofRun = () => receiver.spans.filter((span) => span.traceId === traceId);
      const attempts = () => ofRun().filter((span) => span.service === 'delivery' && span.kind === CONSUMER && span.name === 'DELIVERIES process');
      // The receiver refuses the first attempt: the retry is a second consumer span of the same trace.
      await waitFor(async () => attempts().length >= 2 && ofRun().some((span) => span.name === 'SETTLEMENTS publish'), 30_000, 'both attempts’ spans');
      expect(hook.received.length).toBeGreaterThanOrEqual(2);

      const runner = ofRun().find((span) => span.service === 'decision-runner' && span.kind === SERVER && span.name === SUBJECTS.runner.run)!;
      const published = ofRun().find((span) => span.service === 'decision-runner' && span.kind === PRODUCER && span.name === 'DELIVERIES publish')!;
      expect(published.parentSpanId).toBe(runner.spanId);
      for (const attempt of attempts()) expect(attempt.parentSpanId).toBe(published.spanId);
      expect(
        attempts()
          .map((span) => span.attributes['messaging.message.delivery_count'])
          .sort(),
      ).toEqual([1, 2]);
      // What the attempt does (its database writes) is under its span.
      const attemptIds = new Set(attempts().map((span) => span.spanId));
      expect(ofRun().some((span) => span.service === 'delivery' && span.name.startsWith('db ') && attemptIds.has(span.parentSpanId))).toBe(true);

      // Settlements are posted in batches, each batch a trace of its own linked to the runs it settled.
      const settlement = ofRun().find((span) => span.service === 'decision-runner' && span.kind === PRODUCER && span.name === 'SETTLEMENTS publish')!;
      expect(settlement.parentSpanId).toBe(runner.spanId);
      await waitFor(
        async () =>
          receiver.spans.some((span) => span.service === 'billing-ledger' && span.name === 'SETTLEMENTS process' && span.links.includes(settlement.spanId)),
        30_000,
        'the settlement batch’s span',
      );
      const batch = receiver.spans.find(
        (span) => span.service === 'billing-ledger' && span.name === 'SETTLEMENTS process' && span.links.includes(settlement.spanId),
      )!;
      expect(batch.kind).toBe(CONSUMER);
      expect(batch.traceId).not.toBe(traceId);
    } finally {
      await hook.close();
    }
  }, 90_000);

  it('asks an Anthropic-shaped provider for no token probabilities, and keeps only the model’s own numbers', async () => {
    const user = await api('POST', '/app/v1/auth/sign-up', { body: { email: `${uniqueMarker()}@example.com`, password: 'correcthorse42', name: 'x' } });
    const session = user.body.session.token;
    const workspace = await api('POST', '/app/v1/workspaces', { token: session, body: { name: 'anthropic tokens' } });
    const key = await api('POST', `/app/v1/workspaces/${workspace.body.id}/api-keys`, { token: session, body: { name: 'k', mode: 'live' } });
    const marker = uniqueMarker();
    // A decision that asks for token probabilities where the provider gives them.
    const schema = { ...triageSchema(marker), settings: { confidenceSource: 'tokens' } };
    const decision = await api('POST', `/app/v1/workspaces/${workspace.body.id}/decisions`, {
      token: session,
      body: { slug: 'by-tokens', name: 'by tokens', schema },
    });
    expect((await api('POST', `/app/v1/workspaces/${workspace.body.id}/decisions/${decision.body.id}/deploy`, { token: session })).status).toBe(201);

    const run = await api('POST', '/v1/decisions/by-tokens?include=probabilities', { token: key.body.key, body: { state: { message: 'my parcel is late' } } });
    expect(run.status).toBe(200);
    const asked = (await call('GET', `/_sim/requests?match=${encodeURIComponent(marker)}`, {}, own.simulator.url)).body.data as Array<{ body: any }>;
    expect(asked).toHaveLength(1);
    expect(asked[0]!.body.messages).toBeDefined();
    expect(asked[0]!.body.logprobs).toBeUndefined();
    const intent = run.body.probabilities.intent as Record<string, number>;
    expect(Object.values(intent).reduce((sum, p) => sum + p, 0)).toBeCloseTo(1, 6);

    // With an outcome reported, the quality report has one source to show: the model's own.
    const outcome = await api('POST', `/v1/executions/${run.body.execution_id}/outcome`, {
      token: key.body.key,
      body: { answers: { intent: run.body.result.intent } },
    });
    expect(outcome.status).toBe(200);
    const report = await api('GET', `/app/v1/workspaces/${workspace.body.id}/decisions/${decision.body.id}/quality`, { token: session });
    expect(report.status).toBe(200);
    const question = report.body.questions.find((entry: { key: string }) => entry.key === 'intent');
    expect(question.labelled).toBe(1);
    expect(Object.keys(question.sources)).toEqual(['model']);
  }, 60_000);
});

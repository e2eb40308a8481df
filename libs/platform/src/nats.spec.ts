import { NatsContext, Transport } from '@nestjs/microservices';
import { createLogger } from './logger';
import { Metrics } from './metrics';
import { decodeAnswer, encodeRequest, JsonText, NatsLink, SharedConnectionNatsServer } from './nats';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe('the encoded request', () => {
  it('is what Nest’s NATS server reads: the id and the payload as data', () => {
    expect(JSON.parse(text(encodeRequest('7', { workspaceId: 'ws_1', n: [1, 2] })))).toEqual({ id: '7', data: { workspaceId: 'ws_1', n: [1, 2] } });
    expect(JSON.parse(text(encodeRequest('8', undefined)))).toEqual({ id: '8', data: null });
    expect(JSON.parse(text(encodeRequest('9', 'plain')))).toEqual({ id: '9', data: 'plain' });
  });

  it('carries a JSON text field as the very text it was given, whitespace and escapes included', () => {
    const received = '{ "state": {"message": "caf\\u00e9 \\"x\\"", "amount": 120} }\n';
    const encoded = text(encodeRequest('1', { slug: 'triage', body: new JsonText(received), livemode: false }));
    expect(encoded).toContain(`"body":${received}`);
    expect(JSON.parse(encoded)).toEqual({ id: '1', data: { slug: 'triage', livemode: false, body: { state: { message: 'café "x"', amount: 120 } } } });
  });

  it('carries a payload made of JSON text fields only', () => {
    const encoded = text(encodeRequest('2', { body: new JsonText('[1]'), other: new JsonText('{"a":null}') }));
    expect(JSON.parse(encoded)).toEqual({ id: '2', data: { body: [1], other: { a: null } } });
  });

  it('quotes the names of JSON text fields', () => {
    expect(JSON.parse(text(encodeRequest('3', { 'we"ird': new JsonText('1') })))).toEqual({ id: '3', data: { 'we"ird': 1 } });
  });
});

describe('the decoded answer', () => {
  it('gives the handler’s response or its error', () => {
    const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
    expect(decodeAnswer(encode({ id: '1', response: { body: '{"a":1}' }, isDisposed: true })).response).toEqual({ body: '{"a":1}' });
    expect(decodeAnswer(encode({ id: '1', err: { code: 'NOT_FOUND', status: 404, message: 'x' }, isDisposed: true })).err).toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('a request whose handling fails outside its handler', () => {
  type StartHook = (transport: Transport, context: NatsContext, done: () => Promise<unknown>) => void;

  it('is logged under its subject, counted as failed and no longer in flight, so a drain does not wait for it', async () => {
    const logger = createLogger('gateway', 'silent');
    const errors = jest.spyOn(logger, 'error');
    const metrics = new Metrics('gateway');
    const server = new SharedConnectionNatsServer({ logger } as unknown as NatsLink, 'spec', metrics);
    const start = (server as unknown as { onProcessingStartHook: StartHook }).onProcessingStartHook;
    const inFlight = () => metrics.registry.getSingleMetricAsString('decision_service_rpc_handling_in_flight');

    start(Transport.NATS, new NatsContext(['spec.subject', undefined as never]), () => Promise.reject(new Error('no answer could be built')));
    expect(await inFlight()).toMatch(/\} 1$/m);
    await new Promise((resolve) => setImmediate(resolve));

    expect(errors).toHaveBeenCalledWith(expect.objectContaining({ subject: 'spec.subject' }), expect.any(String));
    expect(await inFlight()).toMatch(/\} 0$/m);
    expect(await metrics.registry.getSingleMetricAsString('decision_service_rpc_handled_total')).toMatch(
      /subject="spec\.subject",outcome="INTERNAL_ERROR".*\} 1$/m,
    );
    const drained = Date.now();
    await server.drain(30_000);
    expect(Date.now() - drained).toBeLessThan(1_000);
  });
});

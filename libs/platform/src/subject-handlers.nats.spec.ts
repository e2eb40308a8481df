import { INestMicroservice, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pino from 'pino';
import { rpcSubject, ServiceError } from '@ds/contracts';
import { NatsServer, startNats } from '../../../test/e2e/support/cluster';
import { Metrics } from './metrics';
import { NatsLink, RpcClient, SharedConnectionNatsServer } from './nats';
import { WireErrorFilter } from './rpc-handling';
import { subjectHandlers } from './subject-handlers';

const SPEC = {
  add: rpcSubject<{ a: number; b: number }, { sum: number }>('spec.handlers.add'),
  greet: rpcSubject<{ name: string }, string>('spec.handlers.greet'),
  refuse: rpcSubject<Record<string, never>, never>('spec.handlers.refuse'),
};

@Injectable()
class Adder {
  add(a: number, b: number) {
    return { sum: a + b };
  }
}

@Injectable()
class Greeter {
  constructor(private readonly adder: Adder) {}

  async greet(name: string) {
    return `hello ${name} (${this.adder.add(1, 1).sum})`;
  }
}

const SpecHandlers = subjectHandlers('SpecHandlers', { adder: Adder, greeter: Greeter }, (on) => [
  on(SPEC.add, ({ adder }, request) => adder.add(request.a, request.b)),
  on(SPEC.greet, ({ greeter }, request) => greeter.greet(request.name)),
  on(SPEC.refuse, () => {
    throw new ServiceError('DECISION_NOT_FOUND', 'No decision with this slug in this workspace.');
  }),
]);

@Module({ controllers: [SpecHandlers], providers: [Adder, Greeter] })
class SpecModule {}

/** A handler class built from a table of subjects, served by Nest over a real NATS server. */
describe('subjectHandlers', () => {
  let nats: NatsServer;
  let serverLink: NatsLink;
  let clientLink: NatsLink;
  let micro: INestMicroservice;
  let rpc: RpcClient;

  beforeAll(async () => {
    nats = await startNats();
    const logger = pino({ level: 'silent' });
    [serverLink, clientLink] = await Promise.all([NatsLink.open(nats.url, 'spec-server', logger), NatsLink.open(nats.url, 'spec-client', logger)]);
    micro = await NestFactory.createMicroservice(SpecModule, {
      strategy: new SharedConnectionNatsServer(serverLink, 'spec', new Metrics('spec')),
      logger: false,
    });
    micro.useGlobalFilters(new WireErrorFilter(logger));
    await micro.listen();
    await serverLink.connection.flush();
    rpc = new RpcClient(clientLink, new Metrics('spec-client'));
  }, 30_000);

  afterAll(async () => {
    await micro?.close();
    await serverLink?.close();
    await clientLink?.close();
    await nats?.stop();
  });

  it('answers each subject with the call its route names, on the services Nest injects', async () => {
    await expect(rpc.call(SPEC.add, { a: 2, b: 3 })).resolves.toEqual({ sum: 5 });
    await expect(rpc.call(SPEC.greet, { name: 'Ada' })).resolves.toBe('hello Ada (2)');
  });

  it('answers a thrown ServiceError with its code, as a hand-written handler does', async () => {
    await expect(rpc.call(SPEC.refuse, {})).rejects.toMatchObject({ code: 'DECISION_NOT_FOUND' });
  });

  it('is named as given, and refuses a subject answered twice', () => {
    expect(SpecHandlers.name).toBe('SpecHandlers');
    expect(() => subjectHandlers('Twice', { adder: Adder }, (on) => [on(SPEC.add, ({ adder }) => adder.add(1, 1)), on(SPEC.add, () => ({ sum: 0 }))])).toThrow(
      'Twice answers spec.handlers.add twice',
    );
  });
});

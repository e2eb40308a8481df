import { AnswerQuestionsRequest, ServiceError } from '@ds/contracts';
import { DEFAULT_PRICES, DEV_CREDENTIALS_KEY, sharedKeyFingerprint } from '@ds/engine';
import { singleKeyring } from '@ds/sealing';
import { startEngineSimulator, type EngineSimulator } from '@ds/engine-simulator';
import { createLogger } from '@ds/platform';
import { EngineProxyConfig } from './config';
import { CredentialsService, WorkspaceCredential } from './credentials/credentials.service';
import { EngineService } from './engine.service';
import { LocalSemaphores, QUEUE_FULL, QueueFull, SlotLease } from './slots/local-semaphore';
import { SharedSlots } from './slots/shared-slots';
import { defined } from '../../../test/e2e/support/api';

/** The engine service against a real simulator, with the workspace credential and the slots in memory. */
let sim: EngineSimulator;
let markers = 0;

beforeAll(async () => {
  sim = await startEngineSimulator();
});
afterAll(() => sim.close());

function config(protocol: 'openai' | 'anthropic', overrides: Partial<EngineProxyConfig> = {}): EngineProxyConfig {
  return {
    defaultEngine: 'llm',
    llm: { protocol, baseUrl: protocol === 'openai' ? `${sim.url}/v1` : sim.url, apiKey: 'shared-key', model: 'sim-standard' },
    checkpoint: { protocol: 'openai', baseUrl: '', apiKey: null, model: null },
    sharedSlots: 1,
    slotQueue: 64,
    prices: DEFAULT_PRICES,
    redisUrl: null,
    credentialsKeys: singleKeyring(DEV_CREDENTIALS_KEY),
    credentialsKeyIsDev: true,
    ...overrides,
  };
}

class MemorySlots {
  readonly semaphores = new LocalSemaphores();
  acquired = 0;
  constructor(private readonly queue = 64) {}
  async acquire(fingerprint: string, deadline: number): Promise<SlotLease | null | QueueFull> {
    const lease = await this.semaphores.acquire(fingerprint, 1, deadline, this.queue);
    if (lease && lease !== QUEUE_FULL) this.acquired++;
    return lease;
  }
  retryAfterSeconds(): number {
    return 2;
  }
}

/** A workspace's credential as the tests give it: without a default engine unless they say so. */
type TestCredential = Omit<WorkspaceCredential, 'defaultEngine'> & Partial<Pick<WorkspaceCredential, 'defaultEngine'>>;

function service(protocol: 'openai' | 'anthropic', credential: TestCredential, slots = new MemorySlots(), overrides: Partial<EngineProxyConfig> = {}) {
  const credentials = { forWorkspace: async (): Promise<WorkspaceCredential> => ({ defaultEngine: null, ...credential }) } as unknown as CredentialsService;
  const engine = new EngineService(config(protocol, overrides), createLogger('engine-proxy', 'silent'), credentials, slots as unknown as SharedSlots);
  return { engine, slots };
}

const SHARED: TestCredential = { useOwnKey: false, key: null, unreadable: false };

function request(marker: string, timeoutMs = 5_000): AnswerQuestionsRequest {
  return {
    workspaceId: 'ws-1',
    engine: null,
    model: null,
    timeoutMs,
    context: marker,
    state: { message: 'refund please' },
    questions: [{ key: 'intent', kind: 'choice', instructions: 'Intent?', outcomes: ['refund', 'exchange', 'other'], guide: [] }],
  };
}

async function script(marker: string, steps: unknown[], repeat = false): Promise<void> {
  const reply = await fetch(`${sim.url}/_sim/scripts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ match: marker, steps, repeat }),
  });
  expect(reply.status).toBe(201);
}

async function requests(marker: string): Promise<Array<{ at: number; headers: Record<string, string> }>> {
  return ((await (await fetch(`${sim.url}/_sim/requests?match=${marker}`)).json()) as { data: Array<{ at: number; headers: Record<string, string> }> }).data;
}

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ServiceError);
  return error as ServiceError;
}

const newMarker = () => `unit-marker-${++markers}-${Date.now()}`;

describe('which key a call uses', () => {
  it('uses the shared key within a slot, and gives the slot back', async () => {
    const marker = newMarker();
    const { engine, slots } = service('openai', SHARED);
    const reply = await engine.answer(request(marker));
    expect(reply).toMatchObject({ engine: 'llm', model: 'sim-standard-2026-11-01' });
    expect(defined((await requests(marker))[0]).headers.authorization).toBe('Bearer shared-key');
    expect(slots.acquired).toBe(1);
    expect(slots.semaphores.held(sharedKeyFingerprint('openai', `${sim.url}/v1`, 'shared-key'))).toBe(0);
  });

  it('uses the workspace’s own key without taking a shared slot', async () => {
    const marker = newMarker();
    const { engine, slots } = service('anthropic', { useOwnKey: true, key: { provider: 'anthropic', apiKey: 'sk-ant-own-1234' }, unreadable: false });
    await engine.answer(request(marker));
    expect(defined((await requests(marker))[0]).headers['x-api-key']).toBe('sk-ant-own-1234');
    expect(slots.acquired).toBe(0);
  });

  it.each([
    [{ useOwnKey: true, key: null, unreadable: false }, 'none is saved'],
    [{ useOwnKey: true, key: null, unreadable: true }, 'cannot be read'],
    [{ useOwnKey: true, key: { provider: 'anthropic' as const, apiKey: 'sk-ant-own-1234' }, unreadable: false }, 'is for anthropic'],
  ])('answers 424 ENGINE_NOT_CONFIGURED for %j without calling the provider', async (credential, message) => {
    const marker = newMarker();
    const { engine } = service('openai', credential);
    const error = await failure(engine.answer(request(marker)));
    expect({ code: error.code, status: error.status }).toEqual({ code: 'ENGINE_NOT_CONFIGURED', status: 424 });
    expect(error.message).toContain(message);
    expect(await requests(marker)).toHaveLength(0);
  });

  describe('the engine of a decision that pins none', () => {
    // The checkpoint engine here is the same simulator under a checkpoint name, so the engine that ran shows.
    const withCheckpoint = (defaultEngine: 'llm' | 'checkpoint' = 'llm') => ({
      defaultEngine,
      checkpoint: { protocol: 'openai' as const, baseUrl: `${sim.url}/v1`, apiKey: null, model: 'ckpt-triage-7b' },
    });

    it('is the workspace’s default when it chose one', async () => {
      const { engine } = service('openai', { ...SHARED, defaultEngine: 'checkpoint' }, new MemorySlots(), withCheckpoint('llm'));
      expect(await engine.answer(request(newMarker()))).toMatchObject({ engine: 'checkpoint', model: 'ckpt-triage-7b', estimatedCostUsd: 0 });
    });

    it('is the service’s ENGINE_DEFAULT while the workspace chose none', async () => {
      const { engine } = service('openai', SHARED, new MemorySlots(), withCheckpoint('checkpoint'));
      expect((await engine.answer(request(newMarker()))).engine).toBe('checkpoint');
    });

    it('gives way to the engine the decision pins', async () => {
      const { engine } = service('openai', { ...SHARED, defaultEngine: 'checkpoint' }, new MemorySlots(), withCheckpoint('checkpoint'));
      expect((await engine.answer({ ...request(newMarker()), engine: 'llm' })).engine).toBe('llm');
    });
  });

  it('answers 424 without a shared key, and for a checkpoint engine that is not configured', async () => {
    const { engine } = service('openai', SHARED, new MemorySlots(), {
      llm: { protocol: 'openai', baseUrl: `${sim.url}/v1`, apiKey: null, model: 'sim-standard' },
    });
    expect((await failure(engine.answer(request(newMarker())))).code).toBe('ENGINE_NOT_CONFIGURED');
    expect((await failure(engine.answer({ ...request(newMarker()), engine: 'checkpoint' }))).code).toBe('ENGINE_NOT_CONFIGURED');
  });

  it('answers 503 ENGINE_RATE_LIMITED when no shared slot frees before the deadline, without calling the provider', async () => {
    const marker = newMarker();
    const slots = new MemorySlots();
    const { engine } = service('openai', SHARED, slots);
    await script(marker, [{ delayMs: 1_000 }]);
    const first = engine.answer(request(marker, 3_000));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    const error = await failure(engine.answer({ ...request(`${marker}-second`), timeoutMs: 500 }));
    expect({ code: error.code, status: error.status }).toEqual({ code: 'ENGINE_RATE_LIMITED', status: 503 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect(await requests(`${marker}-second`)).toHaveLength(0);
    await first;
  });

  it('answers 503 ENGINE_RATE_LIMITED at once, with when to retry, when the slot is held and the queue for it is full', async () => {
    const marker = newMarker();
    const { engine } = service('openai', SHARED, new MemorySlots(1));
    await script(marker, [{ delayMs: 1_000 }]);
    const first = engine.answer(request(marker, 3_000));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const queued = engine.answer(request(`${marker}-queued`, 3_000));
    const started = Date.now();
    const error = await failure(engine.answer(request(`${marker}-third`, 3_000)));
    expect({ code: error.code, status: error.status, details: error.details }).toEqual({
      code: 'ENGINE_RATE_LIMITED',
      status: 503,
      details: { retryAfter: 2 },
    });
    // Refused without waiting for the slot: far less than the second it is held.
    expect(Date.now() - started).toBeLessThan(500);
    expect(await requests(`${marker}-third`)).toHaveLength(0);
    await first;
    // The one that queued got the slot when it came back.
    await expect(queued).resolves.toMatchObject({ engine: 'llm' });
  });

  it('gives the slot back when the call fails', async () => {
    const marker = newMarker();
    const { engine, slots } = service('openai', SHARED);
    await script(marker, [{ status: 400, errorMessage: 'bad things' }]);
    expect((await failure(engine.answer(request(marker)))).code).toBe('ENGINE_INVALID_REQUEST');
    expect((await engine.answer(request(newMarker()))).engine).toBe('llm');
    expect(slots.acquired).toBe(2);
  });
});

describe('retries inside the deadline', () => {
  it('tries three times at most on 5xx and answers the last failure', async () => {
    const marker = newMarker();
    const { engine } = service('openai', SHARED);
    await script(marker, [{ status: 500 }], true);
    const error = await failure(engine.answer(request(marker)));
    expect(error.code).toBe('ENGINE_UNAVAILABLE');
    expect(await requests(marker)).toHaveLength(3);
  });

  it('does not retry a rejected request, and says why the provider rejected it', async () => {
    const marker = newMarker();
    const { engine } = service('anthropic', SHARED);
    await script(marker, [{ status: 400, errorMessage: 'messages.0.content: too long' }], true);
    const error = await failure(engine.answer(request(marker)));
    expect(error.code).toBe('ENGINE_INVALID_REQUEST');
    expect(error.message).toContain('messages.0.content: too long');
    expect(await requests(marker)).toHaveLength(1);
  });

  it('does not follow redirects, which would carry the key elsewhere', async () => {
    const marker = newMarker();
    const { engine } = service('anthropic', SHARED);
    await script(marker, [{ status: 307, headers: { location: 'http://127.0.0.1:1/steal' } }]);
    expect((await failure(engine.answer(request(marker)))).code).toBe('ENGINE_INVALID_REQUEST');
  });

  it('retries a provider that cannot be reached, then answers 503 ENGINE_UNAVAILABLE', async () => {
    const { engine } = service('openai', SHARED, new MemorySlots(), {
      llm: { protocol: 'openai', baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'shared-key', model: 'sim-standard' },
    });
    const error = await failure(engine.answer(request(newMarker())));
    expect({ code: error.code, status: error.status }).toEqual({ code: 'ENGINE_UNAVAILABLE', status: 503 });
  });

  it('stops at the deadline while the provider is still answering', async () => {
    const marker = newMarker();
    const { engine } = service('openai', SHARED);
    await script(marker, [{ delayMs: 2_000 }]);
    const started = Date.now();
    const error = await failure(engine.answer(request(marker, 500)));
    expect({ code: error.code, status: error.status }).toEqual({ code: 'ENGINE_TIMEOUT', status: 504 });
    expect(Date.now() - started).toBeLessThan(1_500);
  });
});

describe('llm destination completions', () => {
  const completion = (marker: string, timeoutMs = 5_000) => ({
    workspaceId: 'ws-1',
    model: null,
    prompt: `Summarise ${marker}.`,
    input: 'The order arrived broken.',
    maxTokens: 64,
    temperature: 0.5,
    timeoutMs,
  });

  it.each(['openai', 'anthropic'] as const)('answers the provider’s text, model and token counts over %s, within a shared slot', async (protocol) => {
    const marker = newMarker();
    const { engine, slots } = service(protocol, SHARED);
    await script(marker, [{ text: 'A broken order.' }]);
    expect(await engine.complete(completion(marker))).toEqual({
      text: 'A broken order.',
      model: 'sim-standard-2026-11-01',
      inputTokens: expect.any(Number),
      outputTokens: 4,
    });
    expect(slots.acquired).toBe(1);
    expect(slots.semaphores.held(sharedKeyFingerprint(protocol, protocol === 'openai' ? `${sim.url}/v1` : sim.url, 'shared-key'))).toBe(0);
  });

  it('uses the workspace’s own key and the destination’s model', async () => {
    const marker = newMarker();
    const { engine, slots } = service('openai', { useOwnKey: true, key: { provider: 'openai', apiKey: 'sk-own-12345678' }, unreadable: false });
    const reply = await engine.complete({ ...completion(marker), model: 'sim-large' });
    expect(reply.model).toBe('sim-large-2026-11-01');
    const sent = defined((await requests(marker))[0]);
    expect(sent.headers.authorization).toBe('Bearer sk-own-12345678');
    expect(slots.acquired).toBe(0);
  });

  it('retries a 5xx, and fails with the engine’s codes in the destination’s words', async () => {
    const retried = newMarker();
    const { engine } = service('openai', SHARED);
    await script(retried, [{ status: 503 }, { text: 'Second time lucky.' }]);
    expect((await engine.complete(completion(retried))).text).toBe('Second time lucky.');
    expect(await requests(retried)).toHaveLength(2);

    const slow = newMarker();
    await script(slow, [{ delayMs: 2_000 }]);
    const timeout = await failure(engine.complete(completion(slow, 500)));
    expect({ code: timeout.code, message: timeout.message }).toEqual({
      code: 'ENGINE_TIMEOUT',
      message: 'The engine did not answer within the destination timeout.',
    });

    const rejected = newMarker();
    await script(rejected, [{ status: 400, errorMessage: 'prompt too long' }]);
    const invalid = await failure(engine.complete(completion(rejected)));
    expect(invalid.code).toBe('ENGINE_INVALID_REQUEST');
    expect(invalid.message).toContain('prompt too long');
  });

  it('answers 424 ENGINE_NOT_CONFIGURED without a usable key', async () => {
    const { engine } = service('openai', { useOwnKey: true, key: null, unreadable: false });
    expect((await failure(engine.complete(completion(newMarker())))).code).toBe('ENGINE_NOT_CONFIGURED');
  });
});

describe('testing a provider key', () => {
  let strict: EngineSimulator;
  beforeAll(async () => {
    strict = await startEngineSimulator({ apiKey: 'sk-good-12345678' });
  });
  afterAll(() => strict.close());

  const tester = (credential: TestCredential = SHARED) =>
    service('openai', credential, new MemorySlots(), {
      llm: { protocol: 'openai', baseUrl: `${strict.url}/v1`, apiKey: 'shared-key', model: 'sim-standard' },
    }).engine;

  it('passes a key the provider accepts and fails one it refuses, saying how', async () => {
    expect(await tester().testKey({ workspaceId: 'ws-1', provider: 'openai', apiKey: 'sk-good-12345678' })).toMatchObject({
      ok: true,
      provider: 'openai',
      code: null,
    });
    const refused = await tester().testKey({ workspaceId: 'ws-1', provider: 'openai', apiKey: 'sk-bad-123456789' });
    expect(refused).toMatchObject({ ok: false, provider: 'openai', model: null });
    expect(refused.code).not.toBeNull();
  });

  it('tests the saved key when none is given, and says when none is saved', async () => {
    const saved = tester({ useOwnKey: false, key: { provider: 'openai', apiKey: 'sk-good-12345678' }, unreadable: false });
    expect((await saved.testKey({ workspaceId: 'ws-1' })).ok).toBe(true);
    const error = await failure(tester().testKey({ workspaceId: 'ws-1' }));
    expect(error.code).toBe('NOT_FOUND');
  });

  // A malformed key never arrives: the gateway refuses it with PROVIDER_KEY_BODY (libs/contracts/src/bodies).
  it('fails a key for another provider without calling', async () => {
    expect(await tester().testKey({ workspaceId: 'ws-1', provider: 'anthropic', apiKey: 'sk-ant-12345678' })).toMatchObject({
      ok: false,
      code: 'ENGINE_NOT_CONFIGURED',
    });
  });
});

describe('token probabilities', () => {
  const forced = { intent: { refund: 0.9, exchange: 0.1, other: 0 } };

  it('are asked for when the decision uses them, and read from the answer tokens beside the stated numbers', async () => {
    const marker = `tokens-${markers++}`;
    await script(marker, [{ answers: forced }]);
    const reply = await service('openai', SHARED).engine.answer({ ...request(marker), tokenProbabilities: true });
    expect(reply.distributions).toEqual(forced);
    expect(reply.tokenDistributions!.intent!.refund).toBeCloseTo(0.81 / 0.82, 9);
    expect(reply.tokenDistributions!.intent!.exchange).toBeCloseTo(0.01 / 0.82, 9);
    expect(reply.tokenDistributions!.intent!.other).toBe(0);
  });

  it('are neither asked for nor recorded otherwise, and the request stays as it was', async () => {
    const marker = `tokens-${markers++}`;
    await script(marker, [{ answers: forced }]);
    const reply = await service('openai', SHARED).engine.answer(request(marker));
    expect(reply.tokenDistributions).toBeUndefined();
    expect(reply.distributions).toEqual(forced);
  });

  it('are not recorded from Anthropic, which has no log-probabilities: only the model’s own numbers', async () => {
    const marker = `tokens-${markers++}`;
    await script(marker, [{ answers: forced }]);
    const reply = await service('anthropic', SHARED).engine.answer({ ...request(marker), tokenProbabilities: true });
    expect(reply.tokenDistributions).toBeUndefined();
    expect(reply.distributions).toEqual(forced);
  });
});

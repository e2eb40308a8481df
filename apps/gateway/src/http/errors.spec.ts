import Fastify from 'fastify';
import { ServiceError } from '@ds/contracts';
import { sendError } from './errors';

/** The headers a refusal carries, answered by a bare Fastify the way the gateway answers every failure. */
async function answered(error: ServiceError): Promise<{ status: number; retryAfter: string | undefined; body: any }> {
  const app = Fastify({ logger: false });
  app.get('/', (request, reply) => sendError(reply, request, error.toWire()));
  try {
    const response = await app.inject({ method: 'GET', url: '/' });
    return { status: response.statusCode, retryAfter: response.headers['retry-after'] as string | undefined, body: response.json() };
  } finally {
    await app.close();
  }
}

describe('Retry-After on refusals', () => {
  it('is sent with 503 ENGINE_RATE_LIMITED when the refusal says when to retry (the engine key’s queue was full)', async () => {
    const reply = await answered(new ServiceError('ENGINE_RATE_LIMITED', 'The shared engine key is at its limit; retry after 3 seconds.', { retryAfter: 3 }));
    expect(reply).toMatchObject({ status: 503, retryAfter: '3', body: { error: { code: 'ENGINE_RATE_LIMITED' } } });
  });

  it('is not invented for an ENGINE_RATE_LIMITED that does not know (the provider’s own refusal)', async () => {
    const reply = await answered(new ServiceError('ENGINE_RATE_LIMITED', 'The engine provider is overloaded or rate limited.'));
    expect(reply.status).toBe(503);
    expect(reply.retryAfter).toBeUndefined();
  });

  it('is still sent with 429 RATE_LIMITED', async () => {
    expect((await answered(new ServiceError('RATE_LIMITED', 'Too many requests', { retryAfter: 12 }))).retryAfter).toBe('12');
  });
});

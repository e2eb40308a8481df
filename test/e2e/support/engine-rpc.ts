import { ClientNats } from '@nestjs/microservices';
import { lastValueFrom, timeout } from 'rxjs';

export interface RpcError {
  code: string;
  status: number;
  message: string;
  details?: unknown;
}

export type RpcResult<T> = { ok: true; value: T } | { ok: false; error: RpcError };

/**
 * Talks to a service over NATS as another service would (Nest's NATS client, the same wire format), for
 * subjects the gateway does not expose yet and for engine-proxy replicas started without a gateway.
 */
export class ServiceRpc {
  private readonly client: ClientNats;

  constructor(natsUrl: string = process.env.E2E_NATS_URL!) {
    this.client = new ClientNats({ servers: [natsUrl] });
  }

  async call<T = any>(subject: string, payload: unknown, timeoutMs = 15_000): Promise<RpcResult<T>> {
    try {
      return { ok: true, value: await lastValueFrom(this.client.send<T>(subject, payload).pipe(timeout(timeoutMs))) };
    } catch (error) {
      const wire = error as Partial<RpcError>;
      if (typeof wire?.code === 'string' && typeof wire.status === 'number') return { ok: false, error: wire as RpcError };
      throw error;
    }
  }

  /** The answer, or a thrown Error naming the code when the handler failed. */
  async ok<T = any>(subject: string, payload: unknown): Promise<T> {
    const result = await this.call<T>(subject, payload);
    if (!result.ok) throw new Error(`${subject} failed: ${result.error.code} ${result.error.message}`);
    return result.value;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

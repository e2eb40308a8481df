import { randomBytes } from 'node:crypto';
import { createServer, IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { connect, NatsConnection } from 'nats';
import { DELIVERY_STREAM, DeliveryMessage } from '@ds/contracts';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  method: string;
  path: string;
  at: number;
}

export type Answer = (request: Received, index: number, response: ServerResponse) => void;

/** A real HTTP receiver on loopback, answering each request as `answer` says and recording it. */
export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Requests whose connection closed before they were answered (the sender gave up). */
  abandoned: number;
  answer: Answer;
  close(): Promise<void>;
}

export async function startReceiver(answer: Answer = (_r, _i, response) => response.writeHead(200).end('ok')): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    abandoned: 0,
    answer,
    close: async () => undefined,
  };
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const entry: Received = { headers: request.headers, body, method: request.method!, path: request.url!, at: Date.now() };
      const index = receiver.received.push(entry) - 1;
      response.on('close', () => {
        if (!response.writableFinished) receiver.abandoned++;
      });
      receiver.answer(entry, index, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export function deliveryId(): string {
  return `dlv_${Array.from(randomBytes(20), (b) => ALPHANUMERIC[b % 62]).join('')}`;
}

/** A webhook delivery as the runner queues it: the `decision.completed` event for a made-up run. */
export function webhookMessage(workspaceId: string, url: string, overrides: Partial<DeliveryMessage> = {}): DeliveryMessage {
  const id = overrides.deliveryId ?? deliveryId();
  const created = Math.floor(Date.now() / 1000);
  const event = {
    id,
    type: 'decision.completed',
    created,
    livemode: overrides.livemode ?? true,
    data: { decision_id: 'dec_e2e', execution_id: 'exec_e2e', result: 'refund', confidence: 0.91, action: 'refund', text: 'ünïcode ✓' },
  };
  return {
    deliveryId: id,
    workspaceId,
    decisionId: 'dec_e2e',
    decisionSlug: 'triage',
    executionId: 'exec_e2e',
    destinationKey: 'ops',
    kind: 'webhook',
    livemode: true,
    url,
    method: 'POST',
    headers: {},
    body: JSON.stringify(event),
    createdAt: new Date(created * 1000).toISOString(),
    ...overrides,
  };
}

/** Publishes straight to JetStream, as the runner does: subject per workspace, `Nats-Msg-Id` = the delivery id. */
export class DeliveryPublisher {
  private constructor(readonly connection: NatsConnection) {}

  static async open(url = process.env.E2E_NATS_URL!): Promise<DeliveryPublisher> {
    return new DeliveryPublisher(await connect({ servers: url, maxReconnectAttempts: -1, reconnectTimeWait: 200 }));
  }

  async publish(message: DeliveryMessage): Promise<void> {
    await this.connection.jetstream().publish(DELIVERY_STREAM.subjectFor(message.workspaceId), JSON.stringify(message), { msgID: message.deliveryId });
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}

/** Polls until `check` holds; fails with `what` after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

import { NatsConnection } from 'nats';

/** The part of nats.js's protocol handler (2.x) that queues outgoing commands. */
interface OutboundQueue {
  outbound: { length(): number; size(): number; fill(buffer: Uint8Array, ...payloads: unknown[]): void };
  pendingLimit: number;
  flushPending(): void;
  sendCommand(command: string | Uint8Array, ...payloads: unknown[]): void;
}

const encoder = new TextEncoder();

/**
 * nats.js writes its queued commands to the socket in a microtask after the first one is queued, so
 * requests and replies produced by different I/O callbacks of one event-loop turn leave in separate
 * writes. Under load a write is one system call per message, the largest share of every service's CPU
 * (docs/performance.md). Flushing once per turn instead (`setImmediate`, after the poll phase has run
 * every ready callback) sends them in one write; a lone message waits for the rest of the current turn
 * only. The size threshold that flushes at once is kept.
 *
 * Applied only when the handler has the shape this was written against; otherwise the library's own
 * behaviour stays, which is correct, just slower.
 */
export function flushOncePerTurn(connection: NatsConnection): boolean {
  const protocol = (connection as unknown as { protocol?: Partial<OutboundQueue> }).protocol;
  if (!isOutboundQueue(protocol)) return false;
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    protocol.flushPending();
  };
  protocol.sendCommand = (command: string | Uint8Array, ...payloads: unknown[]): void => {
    protocol.outbound.fill(typeof command === 'string' ? encoder.encode(command) : command, ...payloads);
    if (protocol.outbound.size() >= protocol.pendingLimit) {
      protocol.flushPending();
    } else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return true;
}

function isOutboundQueue(candidate: Partial<OutboundQueue> | undefined): candidate is OutboundQueue {
  return (
    candidate !== undefined &&
    typeof candidate.sendCommand === 'function' &&
    typeof candidate.flushPending === 'function' &&
    typeof candidate.pendingLimit === 'number' &&
    typeof candidate.outbound?.fill === 'function' &&
    typeof candidate.outbound?.size === 'function'
  );
}

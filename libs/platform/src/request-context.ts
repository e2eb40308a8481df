import { AsyncLocalStorage } from 'node:async_hooks';
import type { Span } from '@opentelemetry/api';
import { newId } from '@ds/ids';

export interface RequestContext {
  requestId: string;
  /** When the caller stops waiting (epoch milliseconds); absent for work nobody is waiting on. */
  deadline?: number;
  /** The span of the request being handled, when tracing is on. */
  span?: Span;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function runWithRequestContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** Runs `fn`, and whatever it schedules, as work of no request: background work a request only woke up. */
export function outsideRequestContext<T>(fn: () => T): T {
  return storage.exit(fn);
}

export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/** A request id for work that did not arrive with one (start-up, background jobs). */
export function requestIdOrNew(): string {
  return currentRequestId() ?? newId('req');
}

export function currentDeadline(): number | undefined {
  return storage.getStore()?.deadline;
}

/** True once the caller of the current request has stopped waiting for its answer. */
export function callerGaveUp(now = Date.now()): boolean {
  const deadline = currentDeadline();
  return deadline !== undefined && now >= deadline;
}

export function currentSpan(): Span | undefined {
  return storage.getStore()?.span;
}

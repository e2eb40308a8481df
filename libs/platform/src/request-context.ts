import { AsyncLocalStorage } from 'node:async_hooks';
import { newId } from '@ds/ids';

export interface RequestContext {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function runWithRequestContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/** A request id for work that did not arrive with one (start-up, background jobs). */
export function requestIdOrNew(): string {
  return currentRequestId() ?? newId('req');
}

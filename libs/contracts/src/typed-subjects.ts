declare const rpcTypes: unique symbol;
declare const broadcastTypes: unique symbol;

/**
 * A NATS subject declared with the types it carries. At run time it is the plain subject string, so Nest's
 * `@MessagePattern(...)`, the permission lists and the logs use it as they would any string; at compile time
 * it carries its request and reply types, from which the RPC client infers both. A bare string is not one:
 * a subject exists only once declared, and the services' subjects are declared in `libs/contracts`.
 */
export type RpcSubject<Request, Reply> = string & { readonly [rpcTypes]: { request: Request; reply: Reply } };

/** A fire-and-forget notice among the replicas of one service, with the type of its payload. */
export type BroadcastSubject<Payload> = string & { readonly [broadcastTypes]: { payload: Payload } };

export type RequestOf<S> = S extends RpcSubject<infer Request, unknown> ? Request : never;
export type ReplyOf<S> = S extends RpcSubject<unknown, infer Reply> ? Reply : never;

/** Declares a request/reply subject: `rpcSubject<BillingReserveRequest, BillingReserveReply>('v1.billing-ledger.reserve')`. */
export function rpcSubject<Request, Reply>(subject: string): RpcSubject<Request, Reply> {
  return subject as RpcSubject<Request, Reply>;
}

/**
 * Declares a broadcast subject. A string payload travels as its text (its subscribers read the message's
 * string), any other as JSON.
 */
export function broadcastSubject<Payload>(subject: string): BroadcastSubject<Payload> {
  return subject as BroadcastSubject<Payload>;
}

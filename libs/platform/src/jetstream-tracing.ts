import { headers as natsHeaders, JetStreamClient, JetStreamPublishOptions, JsMsg, PubAck } from 'nats';
import { currentSpan, requestIdOrNew, runWithRequestContext } from './request-context';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { endSpan, remoteSpanContext, SpanKind, startSpan, TRACEPARENT_HEADER, traceparentOf, tracer } from './tracing';

/**
 * Publishes to a JetStream stream; with tracing on, inside a producer span of the request being handled, whose
 * `traceparent` travels in the message's headers so that the consumer's work joins the same trace however much
 * later it happens.
 */
export async function publishTraced(
  jetstream: JetStreamClient,
  stream: string,
  subject: string,
  data: string | Uint8Array,
  options: Partial<JetStreamPublishOptions>,
): Promise<PubAck> {
  const active = tracer;
  if (active === null) return jetstream.publish(subject, data, options);
  const span = startSpan(active, `${stream} publish`, SpanKind.PRODUCER, { 'messaging.system': 'nats', 'messaging.destination.name': subject }, currentSpan());
  const hdrs = options.headers ?? natsHeaders();
  hdrs.set(TRACEPARENT_HEADER, traceparentOf(span));
  try {
    const ack = await jetstream.publish(subject, data, { ...options, headers: hdrs });
    endSpan(span);
    return ack;
  } catch (error) {
    endSpan(span, 'SERVICE_UNAVAILABLE');
    throw error;
  }
}

/**
 * Runs the handling of one stream message; with tracing on, inside a consumer span whose parent is the producer
 * span the message names, and as the current span of what the handling calls (queries, requests). `outcome`
 * names how it went, for the span's attributes.
 */
export async function consumeTraced<T>(stream: string, message: JsMsg, work: () => Promise<T>, outcome: (result: T) => string = () => 'ok'): Promise<T> {
  const active = tracer;
  if (active === null) return work();
  const span = startSpan(
    active,
    `${stream} process`,
    SpanKind.CONSUMER,
    { 'messaging.system': 'nats', 'messaging.destination.name': message.subject, 'messaging.message.delivery_count': message.info.redeliveryCount },
    undefined,
    message.headers?.get(TRACEPARENT_HEADER),
  );
  try {
    const result = await runWithRequestContext({ requestId: requestIdOrNew(), span }, work);
    span.setAttribute('outcome', outcome(result));
    endSpan(span);
    return result;
  } catch (error) {
    endSpan(span, 'INTERNAL');
    throw error;
  }
}

/**
 * Runs the handling of a batch of stream messages taken together; with tracing on, inside one consumer span
 * linked to the producer span of every message (a batch has many parents, so it starts a trace of its own).
 */
export async function consumeBatchTraced<T>(stream: string, messages: readonly JsMsg[], work: () => Promise<T>): Promise<T> {
  const active = tracer;
  if (active === null) return work();
  const links = messages.flatMap((message) => {
    const context = remoteSpanContext(message.headers?.get(TRACEPARENT_HEADER));
    return context ? [{ context }] : [];
  });
  const span = active.startSpan(
    `${stream} process`,
    { kind: SpanKind.CONSUMER, links, attributes: { 'messaging.system': 'nats', 'messaging.batch.message_count': messages.length } },
    ROOT_CONTEXT,
  );
  try {
    const result = await runWithRequestContext({ requestId: requestIdOrNew(), span }, work);
    endSpan(span);
    return result;
  } catch (error) {
    endSpan(span, 'INTERNAL');
    throw error;
  }
}

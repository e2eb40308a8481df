import { Controller, Inject, Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import type { ReplyOf, RequestOf, RpcSubject } from '@ds/contracts';

/** The instances of a handler class's services, by the names the class gives them. */
export type ServicesOf<D extends Record<string, Type<unknown>>> = { [K in keyof D]: D[K] extends Type<infer T> ? T : never };

export interface SubjectRoute<S> {
  subject: string;
  answer: (services: S, request: any) => unknown;
}

/** Declares the answer to one subject, typed by the subject's request and reply. */
export type On<S> = <Subject extends RpcSubject<any, any>>(
  subject: Subject,
  answer: (services: S, request: RequestOf<Subject>) => ReplyOf<Subject> | Promise<ReplyOf<Subject>>,
) => SubjectRoute<S>;

/**
 * A Nest controller that answers each subject of `routes` by calling into the services it is given, so that a
 * service's NATS surface reads as one table of subject → call. Each subject becomes a method with
 * `@MessagePattern(subject)` and `@Payload()`, as if written by hand: Nest's handler lookup, the exception
 * filter and the per-subject metrics see no difference.
 */
export function subjectHandlers<D extends Record<string, Type<unknown>>>(
  name: string,
  services: D,
  routes: (on: On<ServicesOf<D>>) => SubjectRoute<ServicesOf<D>>[],
): Type<unknown> {
  const names = Object.keys(services);

  class Handlers {
    readonly services: ServicesOf<D>;

    constructor(...instances: unknown[]) {
      this.services = Object.fromEntries(names.map((key, index) => [key, instances[index]])) as ServicesOf<D>;
    }
  }
  Object.defineProperty(Handlers, 'name', { value: name });
  Controller()(Handlers);
  names.forEach((key, index) => Inject(services[key])(Handlers, undefined, index));

  const on: On<ServicesOf<D>> = (subject, answer) => ({ subject, answer });
  const seen = new Set<string>();
  for (const route of routes(on)) {
    if (seen.has(route.subject)) throw new Error(`${name} answers ${route.subject} twice`);
    seen.add(route.subject);
    const descriptor: PropertyDescriptor = {
      value(this: Handlers, request: unknown) {
        return route.answer(this.services, request);
      },
      writable: true,
      configurable: true,
    };
    Object.defineProperty(Handlers.prototype, route.subject, descriptor);
    MessagePattern(route.subject)(Handlers.prototype, route.subject, descriptor);
    Payload()(Handlers.prototype, route.subject, 0);
  }
  return Handlers;
}

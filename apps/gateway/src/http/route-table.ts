import { Access } from './access';

export interface RouteEntry {
  method: string;
  url: string;
  access: Access;
}

/**
 * Every route the gateway registered, with its declared access, as Fastify reported it while routes were
 * added (HEAD twins of GET routes included). Published on the ops port so that tests can try every route
 * without anyone keeping a list.
 */
export class RouteTable {
  private readonly entries: RouteEntry[] = [];

  add(method: string | string[], url: string, access: Access): void {
    for (const one of Array.isArray(method) ? method : [method]) this.entries.push({ method: one, url, access });
  }

  list(): readonly RouteEntry[] {
    return this.entries;
  }
}

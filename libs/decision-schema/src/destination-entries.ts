import type { DestinationMatch } from './destinations';
import { renderTemplate } from './param-template';

/** One element of a run response's `destinations` array. */
export type DestinationEntry = Record<string, unknown> & { key: string; type: string };

/**
 * The response entries of the destinations that matched, in schema order. Replies and functions are
 * answered in the response itself and carry no status. Kinds that call out (llm, agent, webhook, http,
 * workflow) are reported as skipped with reason `unavailable` until this installation can carry them out,
 * so the response never claims a call or a delivery that did not happen.
 */
export function destinationEntries(matches: DestinationMatch[]): DestinationEntry[] {
  return matches.map(({ destination, params, skipped }) => {
    const entry: DestinationEntry = { key: destination.key, type: destination.type };
    if (skipped) return { ...entry, status: 'skipped', ...skipped };
    switch (destination.type) {
      case 'reply':
        return destination.buttons.length > 0
          ? { ...entry, text: renderTemplate(destination.text, params), buttons: destination.buttons }
          : { ...entry, text: renderTemplate(destination.text, params) };
      case 'function':
        return { ...entry, function: destination.function, params };
      default:
        return { ...entry, status: 'skipped', reason: 'unavailable' };
    }
  });
}

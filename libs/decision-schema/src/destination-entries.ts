import type { DestinationMatch } from './destinations';
import { FUNCTION_PARAMS_MAX, REPLY_TEXT_MAX } from './limits';
import { renderTemplateWithin } from './param-template';

/** One element of a run response's `destinations` array. */
export type DestinationEntry = Record<string, unknown> & { key: string; type: string };

/**
 * The response entries of the destinations that matched, in schema order. Replies and functions are
 * answered in the response itself and carry no status. Kinds that call out (llm, agent, webhook, http,
 * workflow) are reported as skipped with reason `unavailable` until this installation can carry them out,
 * so the response never claims a call or a delivery that did not happen.
 *
 * The spec's destination limits hold for what a run renders, not only for what a schema says: a reply whose
 * text renders past 4,000 characters, or a function whose params serialize past FUNCTION_PARAMS_MAX, is
 * skipped with reason `limit` ("a matching destination beyond these limits is skipped"), never truncated.
 */
export function destinationEntries(matches: DestinationMatch[]): DestinationEntry[] {
  return matches.map(({ destination, params, skipped }) => {
    const entry: DestinationEntry = { key: destination.key, type: destination.type };
    if (skipped) return { ...entry, status: 'skipped', ...skipped };
    switch (destination.type) {
      case 'reply': {
        const text = renderTemplateWithin(destination.text, params, REPLY_TEXT_MAX);
        if (text === null) return { ...entry, status: 'skipped', reason: 'limit' };
        return destination.buttons.length > 0 ? { ...entry, text, buttons: destination.buttons } : { ...entry, text };
      }
      case 'function':
        if (!fitsWithin(params, FUNCTION_PARAMS_MAX)) return { ...entry, status: 'skipped', reason: 'limit' };
        return { ...entry, function: destination.function, params };
      default:
        return { ...entry, status: 'skipped', reason: 'unavailable' };
    }
  });
}

/** Whether the params serialize to at most maxLength characters, stopping at the first param that passes it. */
function fitsWithin(params: Readonly<Record<string, unknown>>, maxLength: number): boolean {
  // The braces, and a comma between entries: exactly JSON.stringify(params).length.
  let length = 1;
  for (const [name, value] of Object.entries(params)) {
    length += JSON.stringify(name).length + 1 + (JSON.stringify(value) ?? 'null').length + 1;
    if (length > maxLength) return false;
  }
  return true;
}

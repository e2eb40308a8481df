/** A JSON object: not null, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Characters as people count them (Unicode code points), so an emoji is one character, not two UTF-16 units.
 * Every "up to N characters" limit and the token estimate use this count.
 */
export function charLength(text: string): number {
  let surrogatePairs = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        surrogatePairs++;
        i++;
      }
    }
  }
  return text.length - surrogatePairs;
}

/** JSON.stringify that answers undefined instead of throwing (cycles, BigInt) or for values JSON cannot hold. */
export function serialize(value: unknown): string | undefined {
  try {
    return JSON.stringify(value) as string | undefined;
  } catch {
    return undefined;
  }
}

/**
 * Text counts as itself; JSON counts by its serialized form, as the spec measures JSON instructions and levels.
 * Undefined when the value cannot be serialized.
 */
export function measuredLength(value: unknown): number | undefined {
  const text = typeof value === 'string' ? value : serialize(value);
  return text === undefined ? undefined : charLength(text);
}

/** Own properties only: a state or distribution key such as `constructor` must not find Object.prototype. */
export function ownValue(record: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

export function formatNumber(value: number): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: 20 });
}

/** A deep copy in the form JSON carries it; only for values validation has found serializable. */
export function jsonCopy<T>(value: T): T {
  return typeof value === 'object' && value !== null ? (JSON.parse(JSON.stringify(value)) as T) : value;
}

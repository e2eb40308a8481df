/** The encodings the build writes beside each static file (`.br`, `.gz`), most preferred first. */
export const PREBUILT_CODINGS = ['br', 'gzip'] as const;
export type PrebuiltCoding = (typeof PREBUILT_CODINGS)[number];
export type ContentCoding = PrebuiltCoding | 'identity';

/** RFC 9110 names x-gzip an alias of gzip; old clients still send it. */
const ALIASES: Record<string, string> = { 'x-gzip': 'gzip' };
/** Breaks a tie in q-value: the smaller body first. */
const TIE_ORDER: readonly ContentCoding[] = ['br', 'gzip', 'identity'];
/**
 * Identity is acceptable when not named, but a client that lists codings at any weight wants them over nothing:
 * unnamed, it ranks below every coding named with a q above 0 (as the `negotiator` package used by Express ranks it).
 */
const IMPLICIT_IDENTITY = Number.MIN_VALUE;

/** Each coding named in an Accept-Encoding header with its weight; an entry whose q-value does not parse is dropped. */
function weights(header: string): Map<string, number> {
  const named = new Map<string, number>();
  for (const entry of header.split(',')) {
    const [rawName, ...parameters] = entry.split(';');
    const name = rawName!.trim().toLowerCase();
    if (name === '') continue;
    let weight = 1;
    for (const parameter of parameters) {
      const [key, value] = parameter.split('=').map((part) => part.trim());
      if (key?.toLowerCase() !== 'q') continue;
      // RFC 9110's qvalue: 0 or 1 with up to three decimals; anything else means the entry cannot be trusted.
      weight = value !== undefined && /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value) ? Number(value) : NaN;
    }
    if (Number.isNaN(weight)) continue;
    const coding = ALIASES[name] ?? name;
    // A coding named twice keeps its higher weight: the client accepts it at least that much.
    named.set(coding, Math.max(weight, named.get(coding) ?? 0));
  }
  return named;
}

/**
 * The coding to answer with, given the request's Accept-Encoding and the encoded copies that exist of the file.
 * The highest q-value wins, ties going to brotli, then gzip, then identity. A coding not named takes the weight of
 * `*` when there is one; else it is not acceptable, except identity, which is (ranked last) unless excluded by
 * `identity;q=0` or by `*;q=0`. No header at all asks for nothing encoded. When the client excludes everything we have, the file goes
 * unencoded anyway: RFC 9110 allows that, and a page with its script is better than a 406.
 */
export function chooseContentCoding(acceptEncoding: string | undefined, available: readonly PrebuiltCoding[]): ContentCoding {
  if (acceptEncoding === undefined || available.length === 0) return 'identity';
  const named = weights(acceptEncoding);
  const wildcard = named.get('*');
  const weightOf = (coding: ContentCoding): number => named.get(coding) ?? wildcard ?? (coding === 'identity' ? IMPLICIT_IDENTITY : 0);
  let best: ContentCoding = 'identity';
  let bestWeight = 0;
  for (const coding of TIE_ORDER) {
    if (coding !== 'identity' && !available.includes(coding)) continue;
    const weight = weightOf(coding);
    if (weight > bestWeight) {
      best = coding;
      bestWeight = weight;
    }
  }
  return best;
}

/**
 * Whether an If-None-Match header names the current entity tag (`*` names any). Compared weakly, as RFC 9110 asks
 * for If-None-Match, so a `W/` a proxy put in front of our tag still matches.
 */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const current = opaque(etag);
  return ifNoneMatch.split(',').some((tag) => {
    const candidate = tag.trim();
    return candidate === '*' || opaque(candidate) === current;
  });
}

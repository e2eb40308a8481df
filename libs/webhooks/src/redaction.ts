/**
 * Redaction of the secrets a request carried from what its receiver answered. A receiver that echoes its request
 * rarely echoes it byte for byte: frameworks JSON-escape (`\/`, `\u002F`), URL-encode, base64 it, change its case
 * or log half of it. So each secret is looked for in every one of those spellings, and any run of REDACTION_RUN or
 * more of its characters goes, not only the whole value.
 *
 * The search is linear in the text and in the secrets: the text is read a few times (as written; with JSON and URL
 * escapes decoded; with `+` read as a space too), every REDACTION_RUN-character window of those readings goes into
 * one index by a rolling hash, and every spelling of every secret is slid over that index once, a window that
 * hashes alike compared in full before it counts. A text window matched once leaves the index, so a body that
 * repeats one window thousands of times costs no more than one that does not; the hash's bases are drawn at
 * random for each set of secrets, so no body can be written in advance to collide with them.
 */

/** What stands in for a value never stored or shown: a secret, a signature. */
export const REDACTED = '[redacted]';
/** Runs of this many characters of a secret (in any spelling) are redacted wherever they appear. */
export const REDACTION_RUN = 8;
/**
 * Secrets shorter than this are not searched for: a three-letter secret would blank out every occurrence of those
 * letters. Secrets from this length up to REDACTION_RUN - 1 are redacted whole only (in every spelling).
 */
export const REDACT_MIN_LENGTH = 4;

/** A compiled set of secrets, applied to as many texts as the attempt kept (the body, the content type). */
export type Redactor = (text: string) => string;

interface Needles {
  /** Every spelling of every long secret, case-folded: any REDACTION_RUN-character window of one is redacted. */
  forms: string[];
  /** Spellings of short secrets, case-folded, by length: matched whole. */
  whole: Map<number, Set<string>>;
  /** The first two characters of each of those, as one number: where a whole match may start. */
  wholeStarts: Set<number>;
  /** Whether some secret holds a space, so that `+` in a form-encoded text may stand for it. */
  spaces: boolean;
  hash: WindowHash;
}

/**
 * One unit of the text as read: the character it stands for (case-folded) and the span of the text it came from
 * (one character as written, six for `\u002f`, three for `%2F`, up to twelve for a `%E2%9C%93` sequence).
 */
interface Reading {
  chars: string;
  starts: Int32Array;
  ends: Int32Array;
}

/** The text with every occurrence of the secrets, in every spelling, replaced by REDACTED. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  return secretRedactor(secrets)(text);
}

export function secretRedactor(secrets: readonly string[]): Redactor {
  const needles = needlesOf(secrets);
  if (needles.forms.length === 0 && needles.whole.size === 0) return (text) => text;
  return (text) => redactWith(text, needles);
}

/**
 * The spellings a secret is searched in besides itself (case does not matter in any of them): base64 and base64url
 * of its UTF-8 bytes at each of the three alignments it can have inside a longer base64 text, and hex. JSON and
 * URL escapes are not spellings here: the text is read with them decoded instead, so any mix of escaped and
 * literal characters is found.
 */
export function encodedForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = new Set<string>([bytes.toString('hex')]);
  for (const offset of [0, 1, 2]) {
    // Preceded by `offset` other bytes, the secret's first characters share bits with them and its last may share
    // bits with what follows: only the characters made of the secret's bits alone are the same wherever it sits.
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const first = offset === 0 ? 0 : offset + 1;
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    const stable = encoded.slice(first, end);
    if (stable.length === 0) continue;
    forms.add(stable);
    forms.add(stable.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...forms];
}

function needlesOf(secrets: readonly string[]): Needles {
  const forms = new Set<string>();
  const whole = new Map<number, Set<string>>();
  let spaces = false;
  for (const secret of new Set(secrets)) {
    if (secret.length < REDACT_MIN_LENGTH) continue;
    if (secret.includes(' ')) spaces = true;
    for (const form of [secret, ...encodedForms(secret)].map(fold)) {
      if (secret.length >= REDACTION_RUN) {
        if (form.length >= REDACTION_RUN) forms.add(form);
      } else if (form.length >= REDACT_MIN_LENGTH) {
        let sameLength = whole.get(form.length);
        if (!sameLength) whole.set(form.length, (sameLength = new Set()));
        sameLength.add(form);
      }
    }
  }
  const wholeStarts = new Set([...whole.values()].flatMap((set) => [...set].map((form) => pairAt(form, 0))));
  return { forms: [...forms], whole, wholeStarts, spaces, hash: new WindowHash() };
}

function redactWith(text: string, needles: Needles): string {
  const marked = new Uint8Array(text.length);
  const readings = [literal(text), ...decodedReadings(text, needles.spaces)];
  if (needles.forms.length > 0) {
    const matched = matchedWindows(readings, needles);
    readings.forEach((reading, index) => cover(reading, matched[index]!, REDACTION_RUN, marked));
  }
  if (needles.whole.size > 0) {
    for (const reading of readings) {
      const matched = new Uint8Array(reading.chars.length);
      for (let i = 0; i + 1 < reading.chars.length; i++) {
        if (!needles.wholeStarts.has(pairAt(reading.chars, i))) continue;
        for (const [length, forms] of needles.whole) if (forms.has(reading.chars.slice(i, i + length))) matched[i] = Math.max(matched[i]!, length);
      }
      coverLengths(reading, matched, marked);
    }
  }
  // A surrogate pair is one character: redacted whole or not at all.
  for (let i = 1; i < text.length; i++) {
    if (marked[i - 1] !== marked[i] && isHighSurrogate(text.charCodeAt(i - 1)) && isLowSurrogate(text.charCodeAt(i))) {
      marked[i - 1] = 1;
      marked[i] = 1;
    }
  }
  let result = '';
  let plainFrom = 0;
  for (let i = 0; i < text.length;) {
    if (marked[i] === 0) {
      i++;
      continue;
    }
    result += text.slice(plainFrom, i) + REDACTED;
    while (i < text.length && marked[i] === 1) i++;
    plainFrom = i;
  }
  return plainFrom === 0 ? (result === '' ? text : result) : result + text.slice(plainFrom);
}

/**
 * For each reading, which of its REDACTION_RUN-character windows are a window of some secret's spelling. The
 * readings' windows are indexed by hash; each spelling's windows are looked up there, and a window found equal
 * leaves the index, so every text window is compared successfully at most once.
 */
function matchedWindows(readings: Reading[], needles: Needles): Uint8Array[] {
  const index = new Map<number, number[]>();
  // A bit per low bits of a key, to look in the index only for windows the text may hold.
  const present = new Uint32Array(PRESENT_WORDS);
  // Which reading and where in it, in one number.
  const stride = Math.max(...readings.map((reading) => reading.chars.length)) + 1;
  readings.forEach((reading, which) => {
    needles.hash.each(reading.chars, (start, key) => {
      const low = key & PRESENT_MASK;
      present[low >>> 5]! |= 1 << (low & 31);
      const entry = index.get(key);
      const at = which * stride + start;
      if (entry) entry.push(at);
      else index.set(key, [at]);
    });
  });
  const matched = readings.map((reading) => new Uint8Array(reading.chars.length));
  for (const form of needles.forms) {
    if (index.size === 0) break;
    needles.hash.each(form, (start, key) => {
      const low = key & PRESENT_MASK;
      if ((present[low >>> 5]! & (1 << (low & 31))) === 0) return;
      const entry = index.get(key);
      if (!entry) return;
      const wanted = form.slice(start, start + REDACTION_RUN);
      for (let k = entry.length - 1; k >= 0; k--) {
        const which = Math.floor(entry[k]! / stride);
        const at = entry[k]! - which * stride;
        if (readings[which]!.chars.startsWith(wanted, at)) {
          matched[which]![at] = 1;
          entry[k] = entry[entry.length - 1]!;
          entry.pop();
        }
      }
      if (entry.length === 0) index.delete(key);
    });
  }
  return matched;
}

const PRESENT_BITS = 20;
const PRESENT_MASK = (1 << PRESENT_BITS) - 1;
const PRESENT_WORDS = (1 << PRESENT_BITS) / 32;

/** Marks the text behind every matched window of a reading, each unit once. */
function cover(reading: Reading, matched: Uint8Array, length: number, marked: Uint8Array): void {
  for (let i = 0; i < matched.length; i++) if (matched[i] !== 0) matched[i] = length;
  coverLengths(reading, matched, marked);
}

/** Marks the text behind each window that starts where `lengths` is not 0 and is that long, each unit once. */
function coverLengths(reading: Reading, lengths: Uint8Array, marked: Uint8Array): void {
  let markedUpTo = 0;
  for (let i = 0; i < lengths.length; i++) {
    if (lengths[i] === 0) continue;
    for (let unit = Math.max(i, markedUpTo); unit < i + lengths[i]!; unit++) marked.fill(1, reading.starts[unit]!, reading.ends[unit]!);
    markedUpTo = Math.max(markedUpTo, i + lengths[i]!);
  }
}

/** The two UTF-16 code units at `at`, as one number. */
function pairAt(text: string, at: number): number {
  return text.charCodeAt(at) * 65_536 + text.charCodeAt(at + 1);
}

/**
 * A rolling hash of REDACTION_RUN UTF-16 code units, two polynomial lanes modulo primes below 2^26 with bases drawn
 * at random, joined into one integer below 2^52: every step stays exact in a double.
 */
class WindowHash {
  private static readonly PRIMES = [67_108_859, 67_108_837] as const;
  private readonly bases: [number, number];
  /** base^(REDACTION_RUN - 1) modulo each prime: what the character leaving the window weighed. */
  private readonly leaving: [number, number];

  constructor() {
    const [p, q] = WindowHash.PRIMES;
    this.bases = [65_599 + Math.floor(Math.random() * (p - 65_599)), 65_599 + Math.floor(Math.random() * (q - 65_599))];
    this.leaving = [power(this.bases[0], REDACTION_RUN - 1, p), power(this.bases[1], REDACTION_RUN - 1, q)];
  }

  /** Calls `found` with each window's start and key, in order. */
  each(text: string, found: (start: number, key: number) => void): void {
    const [p, q] = WindowHash.PRIMES;
    const [a, b] = this.bases;
    const [la, lb] = this.leaving;
    let h = 0;
    let g = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (i >= REDACTION_RUN) {
        const out = text.charCodeAt(i - REDACTION_RUN);
        h = (h - ((out * la) % p) + p) % p;
        g = (g - ((out * lb) % q) + q) % q;
      }
      h = (h * a + code) % p;
      g = (g * b + code) % q;
      if (i >= REDACTION_RUN - 1) found(i - REDACTION_RUN + 1, h * 2 ** 26 + g);
    }
  }
}

function power(base: number, exponent: number, modulus: number): number {
  let result = 1;
  for (let i = 0; i < exponent; i++) result = (result * base) % modulus;
  return result;
}

/** The text as written: one unit per UTF-16 code unit. */
function literal(text: string): Reading {
  const starts = new Int32Array(text.length);
  const ends = new Int32Array(text.length);
  for (let i = 0; i < text.length; i++) {
    starts[i] = i;
    ends[i] = i + 1;
  }
  return { chars: fold(text), starts, ends };
}

const JSON_ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/**
 * The text with JSON string escapes (`\/`, `\"`, `\u00XX`, surrogate pairs as two escapes) and URL escapes
 * (`%2F`, either case, UTF-8 sequences of them) decoded, each decoded character keeping the span it came from;
 * anything else as written. A second reading, where `+` stands for a space, only when some secret holds a space.
 */
function decodedReadings(text: string, spaces: boolean): Reading[] {
  if (!/[\\%]/.test(text) && !(spaces && text.includes('+'))) return [];
  let chars = '';
  const starts: number[] = [];
  const ends: number[] = [];
  const plusAt: number[] = [];
  const push = (decoded: string, start: number, end: number) => {
    const folded = fold(decoded);
    chars += folded;
    for (let k = 0; k < folded.length; k++) {
      starts.push(start);
      ends.push(end);
    }
  };
  for (let i = 0; i < text.length;) {
    const char = text[i]!;
    if (char === '\\') {
      const next = text[i + 1];
      if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
        push(String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16)), i, i + 6);
        i += 6;
        continue;
      }
      if (next !== undefined && JSON_ESCAPES[next] !== undefined) {
        push(JSON_ESCAPES[next], i, i + 2);
        i += 2;
        continue;
      }
    } else if (char === '%') {
      const sequence = percentSequence(text, i);
      if (sequence) {
        push(sequence.decoded, i, sequence.end);
        i = sequence.end;
        continue;
      }
    } else if (char === '+') {
      plusAt.push(chars.length);
    }
    push(char, i, i + 1);
    i++;
  }
  const readings: Reading[] = [{ chars, starts: Int32Array.from(starts), ends: Int32Array.from(ends) }];
  if (spaces && plusAt.length > 0) {
    const withSpaces = chars.split('');
    for (const at of plusAt) withSpaces[at] = ' ';
    readings.push({ chars: withSpaces.join(''), starts: readings[0]!.starts, ends: readings[0]!.ends });
  }
  return readings;
}

/** `%XX` at `at`: one ASCII character, or a whole UTF-8 sequence of escapes; null when it is neither. */
function percentSequence(text: string, at: number): { decoded: string; end: number } | null {
  const byteAt = (position: number): number | null =>
    text[position] === '%' && /^[0-9a-fA-F]{2}$/.test(text.slice(position + 1, position + 3)) ? parseInt(text.slice(position + 1, position + 3), 16) : null;
  const lead = byteAt(at);
  if (lead === null) return null;
  if (lead < 0x80) return { decoded: String.fromCharCode(lead), end: at + 3 };
  const length = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
  if (length === 0) return null;
  const bytes = [lead];
  for (let k = 1; k < length; k++) {
    const next = byteAt(at + 3 * k);
    if (next === null || next < 0x80 || next > 0xbf) return null;
    bytes.push(next);
  }
  const decoded = Buffer.from(bytes).toString('utf8');
  return decoded.includes('\uFFFD') ? null : { decoded, end: at + 3 * length };
}

/**
 * Lower case, one UTF-16 code unit for one: a character whose lower case is longer (İ) stays as it is, so that
 * positions in the folded text are positions in the reading.
 */
function fold(text: string): string {
  const lowered = text.toLowerCase();
  if (lowered.length === text.length) return lowered;
  let folded = '';
  for (const unit of text.split('')) {
    const lower = unit.toLowerCase();
    folded += lower.length === 1 ? lower : unit;
  }
  return folded;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

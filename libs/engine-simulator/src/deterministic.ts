import { createHash } from 'node:crypto';

/** One question as the answer schema describes it: its key and the names of its outcomes. */
export interface Question {
  key: string;
  outcomes: string[];
}

export type Distribution = Record<string, number>;

/**
 * Probabilities are whole thousandths, so they read like what a model writes and the
 * integer parts always add up to exactly 1000 before they become decimals.
 */
const UNITS = 1000;
const MIN_MAJORITY = 550;
const MAX_MAJORITY = 900;

/** A fixed release date stands in for the one a provider appends to an alias. */
const RELEASE_DATE = '2026-11-01';
const DATED_NAME = /-\d{4}-\d{2}-\d{2}$/;

function digest(...parts: string[]): Buffer {
  // NUL cannot occur in JSON text, so the joined parts can never collide.
  return createHash('sha256').update(parts.join('\u0000')).digest();
}

/**
 * The answer to one question for one prompt: the same seed and question always give the
 * same distribution, one outcome holds a clear majority (0.55 to 0.9) so the typed answer
 * is unambiguous, and the rest is spread over the other outcomes by their own hashes.
 */
export function deterministicDistribution(seed: string, question: Question): Distribution {
  const { key, outcomes } = question;
  const hash = digest(seed, key);
  const winner = hash.readUInt32BE(0) % outcomes.length;
  const majority = outcomes.length === 1 ? UNITS : MIN_MAJORITY + (hash.readUInt32BE(4) % (MAX_MAJORITY - MIN_MAJORITY + 1));
  const others = outcomes.filter((_, i) => i !== winner);
  const shares = splitUnits(
    UNITS - majority,
    others.map((outcome) => 1 + digest(seed, key, outcome).readUInt16BE(0)),
  );

  const result: Distribution = {};
  let other = 0;
  outcomes.forEach((outcome, i) => {
    // splitUnits returned one share per outcome but the winner, in order, so each other outcome finds its own.
    result[outcome] = (i === winner ? majority : shares[other++]!) / UNITS;
  });
  return result;
}

/** Largest-remainder split of `total` by `weights`, so the parts are whole and add up to `total`. */
function splitUnits(total: number, weights: number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const cells = weights.map((w, i) => {
    const exact = (total * w) / sum;
    return { i, part: Math.floor(exact), remainder: exact - Math.floor(exact) };
  });
  let left = total - cells.reduce((a, cell) => a + cell.part, 0);
  const byRemainder = [...cells].sort((a, b) => b.remainder - a.remainder || a.i - b.i);
  for (const cell of byRemainder) {
    if (left === 0) break;
    cell.part++;
    left--;
  }
  return cells.map((cell) => cell.part);
}

/**
 * The exact version a provider reports for the model asked for: aliases resolve to a dated
 * version (the service must record that, not the alias); a dated name is already exact.
 */
export function reportedModel(requested: string): string {
  return DATED_NAME.test(requested) ? requested : `${requested}-${RELEASE_DATE}`;
}

/** The usual rule of thumb of four characters per token. */
export function estimateTokens(characters: number): number {
  return Math.ceil(characters / 4);
}

/** A free-text answer: the same user turns always give the same text, which names its seed's digest. */
export function freeTextAnswer(seed: string): string {
  return `Simulated answer ${digest(seed).toString('hex').slice(0, 12)}.`;
}

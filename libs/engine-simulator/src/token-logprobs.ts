import type { Answers } from './answers';

/** The reserved object an answer writes first when token probabilities are asked for (as the engine names it). */
export const PICKS_PROPERTY = '_picks';

export interface SimulatedToken {
  token: string;
  logprob: number;
  top_logprobs: Array<{ token: string; logprob: number }>;
}

/**
 * The probabilities a simulated model gives its answer tokens: the stated distribution squared and rescaled, so
 * the tokens are surer than the numbers stated (as real models' often are) yet keep the same order. Deterministic,
 * so a test knows what a run records: {0.9, 0.1} becomes {0.81/0.82, 0.01/0.82}.
 */
export function tokenProbabilities(distribution: Record<string, number>): Array<[string, number]> {
  const squared = Object.entries(distribution).map(([outcome, p]): [string, number] => [outcome, p * p]);
  const total = squared.reduce((sum, [, p]) => sum + p, 0);
  return squared
    .filter(([, p]) => p > 0)
    .map(([outcome, p]): [string, number] => [outcome, p / total])
    .sort((a, b) => b[1] - a[1]);
}

/** The top outcome of a distribution, the first listed on a tie. */
export function topOutcome(distribution: Record<string, number>): string {
  let top = '';
  let best = -1;
  for (const [outcome, p] of Object.entries(distribution)) {
    if (p > best) {
      top = outcome;
      best = p;
    }
  }
  return top;
}

/**
 * The answer's JSON with its picks first, and its tokens: every pick value is a token of its own, whose
 * alternatives are the question's outcomes at their token probabilities (at most `top` of them); the text between
 * picks is cut into tokens the model was sure of.
 */
export function answerWithLogprobs(answers: Answers, picked: readonly string[], top: number): { content: string; tokens: SimulatedToken[] } {
  const picks = Object.fromEntries(picked.filter((key) => answers[key]).map((key) => [key, topOutcome(answers[key]!)]));
  const content = JSON.stringify({ [PICKS_PROPERTY]: picks, ...answers });
  const tokens: SimulatedToken[] = [];
  let at = 0;
  const plain = (text: string) => {
    for (const piece of text.match(/.{1,4}/gs) ?? []) tokens.push({ token: piece, logprob: 0, top_logprobs: top > 0 ? [{ token: piece, logprob: 0 }] : [] });
  };
  for (const [key, value] of Object.entries(picks)) {
    const valueAt = content.indexOf(`${JSON.stringify(key)}:${JSON.stringify(value)}`, at) + JSON.stringify(key).length + 2;
    plain(content.slice(at, valueAt));
    const alternatives = tokenProbabilities(answers[key]!);
    const own = alternatives.find(([outcome]) => outcome === value)?.[1] ?? 1;
    tokens.push({
      token: value,
      logprob: Math.log(own),
      top_logprobs: alternatives.slice(0, top).map(([outcome, p]) => ({ token: outcome, logprob: Math.log(p) })),
    });
    at = valueAt + value.length;
  }
  plain(content.slice(at));
  return { content, tokens };
}

// Replaying a draft or a version against past executions: what a replay may ask for, and how its answers compare.
import type { SchemaIssue } from './issues';
import { isRecord } from './json';
import { parseInstant, parseVersionNumber } from './request-values';
import { ACTIONS, type NormalizedQuestion } from './schema-types';

/** Executions one replay may take. */
export const REPLAY_MAX_EXECUTIONS = 1_000;

/**
 * Replayed executions a workspace may start per rolling 24 hours, by plan: they spend the engine key the workspace
 * shares with every other (the service's) unless it brought its own. Cancelled executions that never ran are given back.
 */
export const REPLAY_DAILY_CAP: Readonly<Record<string, number>> = {
  genesis: 1_000,
  developer: 5_000,
  growth: 20_000,
  enterprise: 100_000,
};

/** Engine calls of replays in flight at once across the whole service: a share of the shared key's slots that live runs never wait behind. */
export const REPLAY_ENGINE_CONCURRENCY = 2;

export type ReplaySelection = { last: number } | { from: string; to: string };

/** What to replay: the draft (`version: null`) or a deployed version, over the last N executions or a time range. */
export interface ReplayPlan {
  version: number | null;
  selection: ReplaySelection;
}

export type ReplayPlanCheck = { ok: true; plan: ReplayPlan } | { ok: false; issues: SchemaIssue[] };

/** Checks a replay request's body; every bad path is named at once. */
export function checkReplayPlan(body: unknown): ReplayPlanCheck {
  if (!isRecord(body)) return { ok: false, issues: [{ path: '', message: 'must be an object with version and last, or from and to' }] };
  const issues: SchemaIssue[] = [];
  let version: number | null = null;
  if (body.version !== undefined && body.version !== null) {
    const parsed = parseVersionNumber(body.version, 'version');
    if (parsed.ok) version = parsed.value;
    else issues.push({ path: 'version', message: `${parsed.issue.message}, or null for the draft` });
  }
  const selection = checkSelection(body, body.last, issues);
  if (issues.length > 0 || selection === null) return { ok: false, issues };
  return { ok: true, plan: { version, selection } };
}

export type ReplaySelectionCheck = { ok: true; selection: ReplaySelection } | { ok: false; issues: SchemaIssue[] };

/**
 * A selection as a query string gives it (`?last=50`, or `?from=…&to=…`), read as a replay's body would be: `last`
 * in canonical digits, dates by the strict parser. Any other parameter is refused, so a typo is not a silent default.
 */
export function checkReplaySelectionQuery(query: Record<string, unknown>): ReplaySelectionCheck {
  const issues: SchemaIssue[] = [];
  for (const name of Object.keys(query)) {
    if (name !== 'last' && name !== 'from' && name !== 'to')
      issues.push({ path: name, message: 'is not a parameter of this request; give last, or from and to' });
  }
  const lastText = query.last;
  // One value each: a repeated parameter arrives as an array and is refused by the checks below.
  const last = typeof lastText === 'string' && /^[1-9][0-9]{0,9}$/.test(lastText) ? Number(lastText) : lastText;
  const selection = checkSelection(query, last, issues);
  if (issues.length > 0 || selection === null) return { ok: false, issues };
  return { ok: true, selection };
}

function checkSelection(body: Record<string, unknown>, last: unknown, issues: SchemaIssue[]): ReplaySelection | null {
  const byCount = body.last !== undefined;
  const byRange = body.from !== undefined || body.to !== undefined;
  if (byCount && byRange) issues.push({ path: '', message: 'give either last, or from and to, not both' });
  else if (byCount) {
    if (Number.isInteger(last) && (last as number) >= 1 && (last as number) <= REPLAY_MAX_EXECUTIONS) return { last: last as number };
    issues.push({ path: 'last', message: `must be an integer from 1 to ${REPLAY_MAX_EXECUTIONS}` });
  } else if (byRange) {
    const from = parseInstant(body.from, 'from');
    const to = parseInstant(body.to, 'to');
    if (!from.ok) issues.push(from.issue);
    if (!to.ok) issues.push(to.issue);
    if (from.ok && to.ok) {
      if (from.value.getTime() >= to.value.getTime()) issues.push({ path: 'to', message: 'must be after from' });
      else return { from: from.value.toISOString(), to: to.value.toISOString() };
    }
  } else issues.push({ path: '', message: 'needs last, or from and to' });
  return null;
}

/** The answer of one question in a run's `result`: an option value, a level label or p(yes). */
export type ReplayAnswer = string | number;

/** One replayed execution: the recorded run's action and answers, the replay's, and the outcome reported since. */
export interface ReplayedExecution {
  old: { action: string; answers: Record<string, ReplayAnswer> | null };
  /** null when the replay's engine call failed. */
  new: { action: string; answers: Record<string, ReplayAnswer> | null } | null;
  /** The right action, when one was reported (docs/quality.md). */
  outcomeAction: string | null;
  /**
   * What a reviewer answered for the recorded run, when its outcome came from a review or an audit
   * (docs/reviews.md); absent or null otherwise.
   */
  reviewed?: { action: string | null; answers: Record<string, unknown> } | null;
}

/** How often each side's answers matched a reviewer's, over compared executions a reviewer resolved. */
export interface ReviewerAgreement {
  executions: number;
  action: { compared: number; old: number | null; new: number | null };
  /** Per question of the replayed schema; `compared` counts executions where the reviewer and both sides answered it. */
  questions: Array<{ key: string; compared: number; old: number | null; new: number | null }>;
}

export interface ReplayComparison {
  /** Executions with both answers; failed replays are counted apart. */
  compared: number;
  failed: number;
  action: { agreed: number; agreement: number | null };
  /** Per question of the replayed schema; `compared` counts executions where both sides kept an answer to it. */
  questions: Array<{ key: string; compared: number; agreed: number; agreement: number | null }>;
  /** Old action (rows) against new action (columns), over the actions that occur, in the service's action order. */
  confusion: { actions: string[]; counts: number[][] };
  /** Over compared executions with a reported action: how often each side's action was the right one. */
  accuracy: { labelled: number; old: number | null; new: number | null };
  reviewers: ReviewerAgreement;
}

/**
 * Whether two answers to one question agree: choice and score answers by value; probability answers (p(yes)) by
 * the side of the question's threshold (0.5 without one) they fall on, since p itself moves with every call.
 */
export function answersAgree(question: NormalizedQuestion, left: ReplayAnswer, right: ReplayAnswer): boolean {
  if (question.kind !== 'probability') return left === right;
  if (typeof left !== 'number' || typeof right !== 'number') return false;
  const threshold = question.threshold ?? 0.5;
  return left >= threshold === right >= threshold;
}

/**
 * Whether an answer matches a reviewer's: choice and score answers by value; a probability answer (p(yes)) when the
 * side of the question's threshold (0.5 without one) it falls on is what the reviewer said happened.
 */
export function answerMatchesReview(question: NormalizedQuestion, answer: ReplayAnswer, reviewed: unknown): boolean {
  if (question.kind !== 'probability') return answer === reviewed;
  if (typeof answer !== 'number' || typeof reviewed !== 'boolean') return false;
  return answer >= (question.threshold ?? 0.5) === reviewed;
}

function reviewerAgreement(
  questions: readonly NormalizedQuestion[],
  compared: ReadonlyArray<ReplayedExecution & { new: NonNullable<ReplayedExecution['new']> }>,
): ReviewerAgreement {
  const reviewed = compared.filter((execution) => execution.reviewed) as Array<
    ReplayedExecution & { new: NonNullable<ReplayedExecution['new']>; reviewed: NonNullable<ReplayedExecution['reviewed']> }
  >;
  const withAction = reviewed.filter((execution) => execution.reviewed.action !== null);
  return {
    executions: reviewed.length,
    action: {
      compared: withAction.length,
      old: rate(withAction.filter((execution) => execution.old.action === execution.reviewed.action).length, withAction.length),
      new: rate(withAction.filter((execution) => execution.new.action === execution.reviewed.action).length, withAction.length),
    },
    questions: questions.map((question) => {
      let both = 0;
      let old = 0;
      let now = 0;
      for (const execution of reviewed) {
        const truth = execution.reviewed.answers[question.key];
        const left = execution.old.answers?.[question.key];
        const right = execution.new.answers?.[question.key];
        if (truth === undefined || left === undefined || right === undefined) continue;
        both++;
        if (answerMatchesReview(question, left, truth)) old++;
        if (answerMatchesReview(question, right, truth)) now++;
      }
      return { key: question.key, compared: both, old: rate(old, both), new: rate(now, both) };
    }),
  };
}

export function compareReplay(questions: readonly NormalizedQuestion[], executions: readonly ReplayedExecution[]): ReplayComparison {
  const compared = executions.filter((execution) => execution.new !== null) as Array<ReplayedExecution & { new: NonNullable<ReplayedExecution['new']> }>;
  const agreed = compared.filter((execution) => execution.old.action === execution.new.action).length;

  const perQuestion = questions.map((question) => {
    let both = 0;
    let same = 0;
    for (const execution of compared) {
      const left = execution.old.answers?.[question.key];
      const right = execution.new.answers?.[question.key];
      if (left === undefined || right === undefined) continue;
      both++;
      if (answersAgree(question, left, right)) same++;
    }
    return { key: question.key, compared: both, agreed: same, agreement: rate(same, both) };
  });

  const seen = new Set(compared.flatMap((execution) => [execution.old.action, execution.new.action]));
  const known: readonly string[] = ACTIONS;
  const actions = [...known.filter((action) => seen.has(action)), ...[...seen].filter((action) => !known.includes(action)).sort()];
  const counts = actions.map(() => actions.map(() => 0));
  for (const execution of compared) counts[actions.indexOf(execution.old.action)]![actions.indexOf(execution.new.action)]!++;

  const labelled = compared.filter((execution) => execution.outcomeAction !== null);
  const rightOld = labelled.filter((execution) => execution.old.action === execution.outcomeAction).length;
  const rightNew = labelled.filter((execution) => execution.new.action === execution.outcomeAction).length;

  return {
    compared: compared.length,
    failed: executions.length - compared.length,
    action: { agreed, agreement: rate(agreed, compared.length) },
    questions: perQuestion,
    confusion: { actions, counts },
    accuracy: { labelled: labelled.length, old: rate(rightOld, labelled.length), new: rate(rightNew, labelled.length) },
    reviewers: reviewerAgreement(questions, compared),
  };
}

function rate(part: number, whole: number): number | null {
  return whole === 0 ? null : part / whole;
}

/** Replayed executions a start may still take today: the plan's cap less what the last 24 hours took. */
export function replayAllowance(plan: string, usedToday: number): number {
  const cap = REPLAY_DAILY_CAP[plan] ?? REPLAY_DAILY_CAP.genesis!;
  return Math.max(0, cap - usedToday);
}

import { isRecord, ownValue } from '../json';
import { levelLabels } from '../outcomes';
import { ACTIONS, type Action, type NormalizedQuestion, type NormalizedSchema } from '../schema-types';
import type { SchemaIssue } from '../issues';

/** What turned out to be right: choice: an option value (`other` allowed); score: a level label; probability: did "yes" happen. */
export type OutcomeValue = string | boolean;

export interface Outcome {
  answers: Record<string, OutcomeValue>;
  action: Action | null;
}

export type OutcomeCheck = { ok: true; outcome: Outcome } | { ok: false; message: string; issues: SchemaIssue[] };

/**
 * Checks a reported outcome against the version that answered the execution. Every bad path is named at once.
 * Fields other than `answers` and `action` are ignored, as the run body's are.
 */
export function checkOutcome(schema: NormalizedSchema, body: unknown): OutcomeCheck {
  if (!isRecord(body)) return refuse([{ path: '', message: 'must be an object with answers, action or both' }]);
  const issues: SchemaIssue[] = [];
  const answers: [string, OutcomeValue][] = [];
  const given = { answers: body.answers !== undefined, action: body.action !== undefined };
  if (!given.answers && !given.action) return refuse([{ path: '', message: 'needs answers, action or both' }]);

  if (given.answers) {
    if (!isRecord(body.answers)) issues.push({ path: 'answers', message: 'must be an object keyed by question key' });
    else {
      for (const key of Object.keys(body.answers)) {
        const question = schema.questions.find((candidate) => candidate.key === key);
        const value = ownValue(body.answers, key);
        const path = `answers.${key}`;
        if (!question) issues.push({ path, message: 'is not a question of the version that answered this execution' });
        else {
          const problem = valueProblem(question, value);
          if (problem) issues.push({ path, message: problem });
          else answers.push([key, value as OutcomeValue]);
        }
      }
      if (Object.keys(body.answers).length === 0 && !given.action) issues.push({ path: 'answers', message: 'names no question' });
    }
  }
  let action: Action | null = null;
  if (given.action) {
    if (typeof body.action === 'string' && (ACTIONS as readonly string[]).includes(body.action)) action = body.action as Action;
    else issues.push({ path: 'action', message: `must be one of ${ACTIONS.join(', ')}` });
  }
  if (issues.length > 0) return refuse(issues);
  // Answers are kept in question order, whatever order the caller sent them in.
  const order = new Map(schema.questions.map((question, i) => [question.key, i]));
  answers.sort((a, b) => order.get(a[0])! - order.get(b[0])!);
  return { ok: true, outcome: { answers: Object.fromEntries(answers), action } };
}

function refuse(issues: SchemaIssue[]): OutcomeCheck {
  return { ok: false, message: 'The outcome does not fit the version that answered this execution.', issues };
}

function valueProblem(question: NormalizedQuestion, value: unknown): string | null {
  switch (question.kind) {
    case 'choice': {
      const values = question.options.map((option) => option.value);
      return typeof value === 'string' && values.includes(value) ? null : `must be one of the options: ${values.join(', ')}`;
    }
    case 'score': {
      const labels = levelLabels(question);
      return typeof value === 'string' && labels.includes(value) ? null : `must be one of the level labels: ${labels.join(', ')}`;
    }
    case 'probability':
      return typeof value === 'boolean' ? null : 'must be true (the "yes" happened) or false';
  }
}

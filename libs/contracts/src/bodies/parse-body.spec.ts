import { z } from 'zod';
import { ERROR_ISSUES_MAX, ServiceError } from '../errors';
import { API_KEY_BODY, INVITATION_BODY, INVITATION_TOKEN_BODY, MEMBER_BODY, NEW_PASSWORD_BODY, SIGN_UP_BODY, WORKSPACE_BODY } from './account';
import { bodyIssues, parseBody, parseValue, text } from './parse-body';

function refusal(run: () => unknown): ServiceError {
  try {
    run();
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('parseBody', () => {
  const schema = z.object({ name: text(1, 80, 'must be 1 to 80 characters') });

  it('answers the parsed body, unknown keys of a non-strict schema left out', () => {
    expect(parseBody(schema, { name: 'Ops', extra: 1 }, 'The thing is not valid.')).toEqual({ name: 'Ops' });
  });

  it('refuses an empty body and one that is not an object before the schema, with the words every route uses', () => {
    for (const empty of [undefined, null]) {
      const error = refusal(() => parseBody(schema, empty, 'x'));
      expect([error.code, error.message, error.details]).toEqual(['INVALID_REQUEST', 'The request body is empty; send a JSON object.', undefined]);
    }
    for (const notObject of [[], 'text', 42, true]) {
      const error = refusal(() => parseBody(schema, notObject, 'x'));
      expect([error.code, error.message]).toEqual(['INVALID_REQUEST', 'The request body must be a JSON object.']);
    }
  });

  it("refuses with the body's message and one issue per field, in the schema's order", () => {
    const both = z.object({
      a: z.string({ error: 'must be a' }),
      b: z.object({ c: z.boolean({ error: 'must be true or false' }) }, { error: 'must be an object' }),
    });
    const error = refusal(() => parseBody(both, { b: { c: 'yes' } }, 'The body is not valid.'));
    expect(error.status).toBe(400);
    expect(error.message).toBe('The body is not valid.');
    expect(error.details).toEqual([
      { path: 'a', message: 'must be a' },
      { path: 'b.c', message: 'must be true or false' },
    ]);
  });

  it('names each unknown key of a strict schema as its own issue, nested paths dotted', () => {
    const strict = z.strictObject({ inner: z.strictObject({ ok: z.number().optional() }) });
    const error = refusal(() => parseBody(strict, { inner: { x: 1, y: 2 }, z: 3 }, 'm', 'is not a field of this body'));
    expect(error.details).toEqual(
      expect.arrayContaining([
        { path: 'inner.x', message: 'is not a field of this body' },
        { path: 'inner.y', message: 'is not a field of this body' },
        { path: 'z', message: 'is not a field of this body' },
      ]),
    );
  });

  it('lists at most ERROR_ISSUES_MAX issues and counts the rest in the message', () => {
    const many = z.strictObject({});
    const body = Object.fromEntries(Array.from({ length: ERROR_ISSUES_MAX + 7 }, (_, i) => [`k${i}`, i]));
    const error = refusal(() => parseBody(many, body, 'The body is not valid.'));
    expect(error.details).toHaveLength(ERROR_ISSUES_MAX);
    expect(error.message).toBe(`The body is not valid. The first ${ERROR_ISSUES_MAX} issues are listed in details; 7 more are not.`);
  });

  it('parseValue checks any value, a body already known to be an object or one part of it', () => {
    expect(() => parseValue(z.number({ error: 'must be a number' }), 'x', 'm')).toThrow(
      expect.objectContaining({ details: [{ path: '', message: 'must be a number' }] }),
    );
  });

  it('answers one issue per path, where zod reports an array given for text both as the wrong type and as too short', () => {
    expect(refusal(() => parseBody(NEW_PASSWORD_BODY, { password: [] }, 'm')).details).toEqual([{ path: 'password', message: 'must be 10 to 128 characters' }]);
  });

  it('bodyIssues keeps the messages the schema wrote', () => {
    const parsed = z.object({ n: z.int({ error: 'must be an integer' }) }).safeParse({ n: 1.5 });
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(bodyIssues(parsed.error)).toEqual([{ path: 'n', message: 'must be an integer' }]);
  });
});

describe('text', () => {
  const name = text(1, 80, 'must be 1 to 80 characters', { blank: false });
  it.each([[''], ['   '], ['x'.repeat(81)], [' '.repeat(81)], [42], [undefined]])('refuses %p with one issue', (value) => {
    const parsed = name.safeParse(value);
    expect(parsed.success ? [] : parsed.error.issues.map((issue) => issue.message)).toEqual(['must be 1 to 80 characters']);
  });
  it('counts UTF-16 code units, as String.length does, where zod would count code points', () => {
    expect(text(1, 80, 'm').safeParse('😀'.repeat(40)).success).toBe(true);
    expect(text(1, 80, 'm').safeParse('😀'.repeat(41)).success).toBe(false);
  });

  it('passes text within the bounds', () => {
    expect(name.parse(' Ops ')).toBe(' Ops ');
    expect(text(1, 80, 'm').parse(' ')).toBe(' ');
  });
});

describe('account bodies', () => {
  const issuesOf = (schema: z.ZodType, body: unknown) => refusal(() => parseBody(schema, body, 'm')).details;

  it.each([
    ['abcdefgh1', 'must be 10 to 128 characters'],
    ['a1'.repeat(64) + 'a', 'must be 10 to 128 characters'],
    ['abcdefghij', 'must contain letters and numbers'],
    ['1234567890', 'must contain letters and numbers'],
    [42, 'must be 10 to 128 characters'],
    [undefined, 'must be 10 to 128 characters'],
  ])('a password %p is refused: %p', (password, message) => {
    expect(issuesOf(NEW_PASSWORD_BODY, { password })).toEqual([{ path: 'password', message }]);
  });

  it('a password of 10 to 128 characters with letters and numbers passes', () => {
    expect(NEW_PASSWORD_BODY.parse({ password: 'abcdefghi1' })).toEqual({ password: 'abcdefghi1' });
    expect(NEW_PASSWORD_BODY.parse({ password: 'a1'.repeat(64) })).toEqual({ password: 'a1'.repeat(64) });
  });

  it('a sign-up lists every field that is wrong, in the order email, password, name', () => {
    expect(issuesOf(SIGN_UP_BODY, { email: 'nope', password: 'short', name: '  ' })).toEqual([
      { path: 'email', message: 'must be an e-mail address' },
      { path: 'password', message: 'must be 10 to 128 characters' },
      { path: 'name', message: 'must be 1 to 80 characters' },
    ]);
  });

  it.each([
    [{ email: 'not an address', role: 'member' }, ['email']],
    [{ email: 'ana@example.com', role: 'owner' }, ['role']],
    [{ email: 'ana@example.com' }, ['role']],
    [{ role: 'admin' }, ['email']],
    [{ email: 42, role: 'boss' }, ['email', 'role']],
  ])('an invitation %j is refused at %j', (body, paths) => {
    expect((issuesOf(INVITATION_BODY, body) as Array<{ path: string }>).map((issue) => issue.path)).toEqual(paths);
  });

  it('a member needs a non-empty e-mail, not an address pattern, and a role below Owner', () => {
    expect(MEMBER_BODY.parse({ email: 'Ana', role: 'viewer' })).toEqual({ email: 'Ana', role: 'viewer' });
    expect(issuesOf(MEMBER_BODY, { email: '', role: 'owner' })).toEqual([
      { path: 'email', message: 'must be an e-mail address' },
      { path: 'role', message: 'must be admin, member, viewer or reviewer' },
    ]);
  });

  it('an invitation token is 1 to 256 characters', () => {
    expect(INVITATION_TOKEN_BODY.parse({ token: 'inv_tok_abc' })).toEqual({ token: 'inv_tok_abc' });
    for (const token of [undefined, null, '', 42, {}, 'x'.repeat(257)]) {
      expect(issuesOf(INVITATION_TOKEN_BODY, { token })).toEqual([{ path: 'token', message: 'must be the token of the invitation link' }]);
    }
  });

  it('a workspace name may not be blank; an API key name may', () => {
    expect(issuesOf(WORKSPACE_BODY, { name: '   ' })).toEqual([{ path: 'name', message: 'must be 1 to 80 characters' }]);
    expect(API_KEY_BODY.parse({ name: ' ', mode: 'test' })).toEqual({ name: ' ', mode: 'test' });
    expect(issuesOf(API_KEY_BODY, { name: '', mode: 'prod' })).toEqual([
      { path: 'name', message: 'must be 1 to 80 characters' },
      { path: 'mode', message: 'must be live or test' },
    ]);
  });
});

import {
  boundedErrorContent,
  boundedText,
  ERROR_ISSUE_MESSAGE_MAX_CHARS,
  ERROR_ISSUE_PATH_MAX_CHARS,
  ERROR_ISSUES_MAX,
  ERROR_MESSAGE_MAX_CHARS,
  errorBody,
  ServiceError,
  ValidationIssue,
} from './errors';

describe('ServiceError on the wire', () => {
  it('travels with its code, status, message and details', () => {
    const wire = new ServiceError('INVALID_STATE', 'message is required', [{ path: 'message', message: 'required' }]).toWire();
    expect(wire).toEqual({ code: 'INVALID_STATE', status: 422, message: 'message is required', details: [{ path: 'message', message: 'required' }] });
    const back = ServiceError.fromWire(JSON.parse(JSON.stringify(wire)));
    expect([back.code, back.status, back.message, back.details]).toEqual(['INVALID_STATE', 422, 'message is required', wire.details]);
    expect(back.internal).toBeUndefined();
  });

  it('carries what the callee settled to its caller, and never into the public body', () => {
    const error = new ServiceError('ENGINE_UNAVAILABLE', 'The provider failed.');
    error.internal = { engine: 'checkpoint', model: 'ckpt-triage-7b' };
    const back = ServiceError.fromWire(JSON.parse(JSON.stringify(error.toWire())));
    expect(back.internal).toEqual({ engine: 'checkpoint', model: 'ckpt-triage-7b' });
    expect(errorBody(back.toWire(), 'req_1')).toEqual({ error: { code: 'ENGINE_UNAVAILABLE', message: 'The provider failed.', request_id: 'req_1' } });
  });

  it('ignores an internal part that is not an object', () => {
    const back = ServiceError.fromWire({ code: 'ENGINE_ERROR', status: 502, message: 'x', internal: 'checkpoint' as never });
    expect(back.internal).toBeUndefined();
  });
});

function unknownKeys(count: number, key = (i: number) => `k${i}`): ValidationIssue[] {
  return Array.from({ length: count }, (_, i) => ({ path: `answers.${key(i)}`, message: 'is not a question of the version that answered this execution' }));
}

describe('boundedText', () => {
  it('keeps a text within the bound as it is', () => {
    expect(boundedText('', 5)).toBe('');
    expect(boundedText('abcde', 5)).toBe('abcde');
  });

  it('cuts a longer text to the bound, the last character a mark that there was more', () => {
    expect(boundedText('abcdef', 5)).toBe('abcd…');
    expect(boundedText('x'.repeat(100_000), 200)).toHaveLength(200);
  });

  it('never ends in half a surrogate pair', () => {
    const cut = boundedText('abc😀😀😀', 5);
    expect(cut).toBe('abc…');
    expect(cut).not.toMatch(/\p{Surrogate}/u);
    expect(boundedText('ab😀😀😀', 5)).toBe('ab😀…');
  });
});

describe('the bounds of an error', () => {
  it('lists the first 50 issues in order and says in the message how many more there were', () => {
    const error = new ServiceError('INVALID_REQUEST', 'The outcome does not fit the version that answered this execution.', unknownKeys(10_000));
    expect(ERROR_ISSUES_MAX).toBe(50);
    expect(error.details).toEqual(unknownKeys(50));
    expect(error.message).toBe(
      'The outcome does not fit the version that answered this execution. The first 50 issues are listed in details; 9,950 more are not.',
    );
    expect(error.issuesNotListed).toBe(9_950);
    expect(Object.keys(error.toWire()).sort()).toEqual(['code', 'details', 'message', 'status']);
  });

  it('keeps 50 issues or fewer as they are, with the message unchanged', () => {
    for (const count of [0, 1, 50]) {
      const error = new ServiceError('INVALID_SCHEMA', 'The decision schema is not valid.', unknownKeys(count));
      expect([error.details, error.message, error.issuesNotListed]).toEqual([unknownKeys(count), 'The decision schema is not valid.', 0]);
    }
    const error = new ServiceError('INVALID_SCHEMA', 'The decision schema is not valid.', unknownKeys(51));
    expect(error.message).toMatch(/; 1 more are not\.$/);
  });

  it('cuts a hostile path and a long issue message to their bounds', () => {
    const error = new ServiceError('INVALID_REQUEST', 'Bad.', [{ path: `answers.${'k'.repeat(100_000)}`, message: 'm'.repeat(5_000) }]);
    const [issue] = error.details as ValidationIssue[];
    expect(issue!.path).toHaveLength(ERROR_ISSUE_PATH_MAX_CHARS);
    expect(issue!.path.startsWith('answers.kkk')).toBe(true);
    expect(issue!.message).toHaveLength(ERROR_ISSUE_MESSAGE_MAX_CHARS);
  });

  it('cuts a long message, the count of the issues not listed kept whole', () => {
    expect(new ServiceError('NOT_FOUND', `No tool ${'t'.repeat(100_000)}.`).message).toHaveLength(ERROR_MESSAGE_MAX_CHARS);
    const error = new ServiceError('INVALID_REQUEST', 'x'.repeat(5_000), unknownKeys(60));
    expect(error.message).toHaveLength(ERROR_MESSAGE_MAX_CHARS);
    expect(error.message).toMatch(/… The first 50 issues are listed in details; 10 more are not\.$/);
  });

  it('stays a few kilobytes for 14,000 hostile keys of 100 characters', () => {
    const error = new ServiceError(
      'INVALID_REQUEST',
      'The outcome does not fit.',
      unknownKeys(14_000, (i) => `${'h'.repeat(100)}${i}`),
    );
    expect(JSON.stringify(errorBody(error.toWire(), 'req_1')).length).toBeLessThan(16 * 1024);
  });

  it('is the same after crossing the wire: bounding twice changes nothing', () => {
    const error = new ServiceError(
      'INVALID_REQUEST',
      'The outcome does not fit.',
      unknownKeys(200, (i) => `${'h'.repeat(300)}${i}`),
    );
    const back = ServiceError.fromWire(JSON.parse(JSON.stringify(error.toWire())));
    expect([back.message, back.details]).toEqual([error.message, error.details]);
    expect(back.issuesNotListed).toBe(0);
  });

  it('takes issues that arrived malformed over the wire as text', () => {
    const back = ServiceError.fromWire({
      code: 'INVALID_REQUEST',
      status: 400,
      message: 'x',
      details: [{ path: 7, message: null, extra: 'x'.repeat(10_000) }] as never,
    });
    expect(back.details).toEqual([{ path: '', message: '' }]);
  });

  it('leaves details that are an object as they are', () => {
    const details = { currentRevision: 3 };
    expect(boundedErrorContent('Stale.', details)).toEqual({ message: 'Stale.', details, issuesNotListed: 0 });
    expect(new ServiceError('CONFLICT', 'Stale.', details).details).toEqual(details);
  });
});

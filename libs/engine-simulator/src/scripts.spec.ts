import { InvalidRequest } from './invalid-request';
import { parseScript, ScriptBook } from './scripts';

describe('ScriptBook', () => {
  it('uses steps in order, then nothing', () => {
    const book = new ScriptBook();
    book.add({ match: 'm1', steps: [{ status: 529 }, { status: 429 }] });
    expect(book.take('has m1')).toEqual({ status: 529 });
    expect(book.take('has m1')).toEqual({ status: 429 });
    expect(book.take('has m1')).toBeUndefined();
  });

  it('repeats the last step forever when asked', () => {
    const book = new ScriptBook();
    book.add({ match: 'm1', steps: [{ status: 500 }, { status: 503 }], repeat: true });
    expect([1, 2, 3, 4].map(() => book.take('m1')?.status)).toEqual([500, 503, 503, 503]);
  });

  it('applies only to bodies containing the match, most recent script first', () => {
    const book = new ScriptBook();
    book.add({ match: 'marker', steps: [{ status: 500 }] });
    book.add({ match: 'marker-b', steps: [{ status: 429 }] });
    expect(book.take('nothing here')).toBeUndefined();
    expect(book.take('marker-b')?.status).toBe(429);
    // The newer script is used up, so the older one that also matches takes over.
    expect(book.take('marker-b')?.status).toBe(500);
    expect(book.take('marker-b')).toBeUndefined();
  });

  it('removes scripts whose match contains the given text, or all', () => {
    const book = new ScriptBook();
    book.add({ match: 'run-1-a', steps: [{ status: 500 }] });
    book.add({ match: 'run-1-b', steps: [{ status: 500 }] });
    book.add({ match: 'run-2', steps: [{ status: 500 }] });
    expect(book.remove('run-1')).toBe(2);
    expect(book.take('run-1-a')).toBeUndefined();
    expect(book.remove()).toBe(1);
    expect(book.take('run-2')).toBeUndefined();
  });

  it('gives every script its own id', () => {
    const book = new ScriptBook();
    const a = book.add({ match: '', steps: [{}] });
    const b = book.add({ match: '', steps: [{}] });
    expect(a).toMatch(/^scr_[A-Za-z0-9]{20}$/);
    expect(a).not.toBe(b);
  });
});

describe('parseScript', () => {
  it('accepts every step field', () => {
    const script = {
      match: 'm',
      repeat: true,
      steps: [
        {
          status: 503,
          headers: { 'x-a': '1' },
          retryAfter: 2,
          delayMs: 10,
          drop: false,
          malformed: false,
          incomplete: false,
          unknownOutcome: false,
          answers: { intent: { refund: 1 } },
          model: 'm-2026-01-01',
          errorMessage: 'boom',
        },
      ],
    };
    expect(parseScript(script)).toEqual(script);
  });

  it.each([
    [null, 'the script must be a JSON object'],
    [{ steps: [{}] }, 'match must be a string'],
    [{ match: 'm', steps: [] }, 'steps must be a non-empty array'],
    [{ match: 'm', steps: [{}], repeat: 'yes' }, 'repeat must be a boolean'],
    [{ match: 'm', steps: [{}], extra: 1 }, 'unknown script field extra'],
    [{ match: 'm', steps: [1] }, 'steps[0] must be an object'],
    [{ match: 'm', steps: [{}, { retry_after: 1 }] }, 'steps[1] has an unknown field retry_after'],
    [{ match: 'm', steps: [{ status: 99 }] }, 'steps[0].status must be an integer from 200 to 599'],
    [{ match: 'm', steps: [{ delayMs: -1 }] }, 'steps[0].delayMs must be a non-negative number of milliseconds'],
    [{ match: 'm', steps: [{ headers: { a: 1 } }] }, 'steps[0].headers must be an object of strings'],
    [{ match: 'm', steps: [{ answers: { q: { a: '1' } } }] }, 'steps[0].answers must be an object of {outcome: number} objects'],
    [{ match: 'm', steps: [{ drop: 1 }] }, 'steps[0].drop must be a boolean'],
    [{ match: 'm', steps: [{ constructor: 1 }] }, 'steps[0] has an unknown field constructor'],
    [{ match: 'm', steps: [{ toString: 1 }] }, 'steps[0] has an unknown field toString'],
    [{ match: 'm', steps: [JSON.parse('{"__proto__":1}')] }, 'steps[0] has an unknown field __proto__'],
  ])('refuses %j', (body, message) => {
    expect(() => parseScript(body)).toThrow(new InvalidRequest(message));
  });
});

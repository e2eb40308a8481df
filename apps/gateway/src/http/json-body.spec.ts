import fc from 'fast-check';
import { ServiceError } from '@ds/contracts';
import { bodyProblems, JSON_BODY_PROBLEMS_MAX, JSON_NESTING_MAX, parseJsonBody } from './json-body';

function refusal(text: string): { code: string; status: number; message: string; details: unknown } {
  try {
    parseJsonBody(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    const { code, status, message, details } = error as ServiceError;
    return { code, status, message, details };
  }
  throw new Error(`accepted: ${text.slice(0, 80)}`);
}

const nestedArrays = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
const nestedObjects = (levels: number) => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);

describe('parseJsonBody', () => {
  it('answers the parsed value of ordinary JSON, and undefined for an empty body', () => {
    expect(parseJsonBody('{"state":{"message":"héllo 😀","n":[1,2,{"x":null}]}}')).toEqual({ state: { message: 'héllo 😀', n: [1, 2, { x: null }] } });
    expect(parseJsonBody('"text"')).toBe('text');
    expect(parseJsonBody('null')).toBeNull();
    expect(parseJsonBody('')).toBeUndefined();
  });

  it('refuses malformed JSON with the parser message in details', () => {
    const answer = refusal('{"state":');
    expect(answer).toMatchObject({ code: 'INVALID_REQUEST', status: 400, message: 'The request body is not valid JSON.' });
    expect(answer.details).toEqual([{ path: '', message: expect.stringMatching(/JSON/) }]);
  });

  it.each([
    ['__proto__ at the top', '{"__proto__":{"admin":true}}'],
    ['__proto__ deep inside', '{"state":{"list":[{"ok":1},{"__proto__":{"polluted":1}}]}}'],
    ['__proto__ written with escapes', '{"state":{"\\u005f_proto__":{"polluted":1}}}'],
    ['constructor.prototype', '{"state":{"constructor":{"prototype":{"polluted":1}}}}'],
  ])('refuses %s with 400 INVALID_REQUEST and leaves Object.prototype alone', (_what, text) => {
    expect(refusal(text)).toMatchObject({ code: 'INVALID_REQUEST', status: 400, message: 'The request body uses a property name that is not allowed.' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('accepts constructor, toString and hasOwnProperty as ordinary keys', () => {
    const text = '{"state":{"constructor":"a","toString":1,"hasOwnProperty":[],"prototype":{}}}';
    expect(parseJsonBody(text)).toEqual({ state: { constructor: 'a', toString: 1, hasOwnProperty: [], prototype: {} } });
  });

  it(`accepts ${JSON_NESTING_MAX} levels of nesting and refuses one more, at the path where it happens`, () => {
    expect(parseJsonBody(nestedArrays(JSON_NESTING_MAX))).toBeDefined();
    expect(parseJsonBody(nestedObjects(JSON_NESTING_MAX))).toBeDefined();
    const arrays = refusal(nestedArrays(JSON_NESTING_MAX + 1));
    expect(arrays).toMatchObject({ code: 'INVALID_REQUEST', status: 400, message: `The request body is nested deeper than ${JSON_NESTING_MAX} levels.` });
    expect(arrays.details).toEqual([
      { path: Array(JSON_NESTING_MAX).fill('0').join('.'), message: `nested deeper than ${JSON_NESTING_MAX} levels of objects and arrays` },
    ]);
    expect(refusal(nestedObjects(JSON_NESTING_MAX + 1)).details).toEqual([
      { path: Array(JSON_NESTING_MAX).fill('a').join('.'), message: `nested deeper than ${JSON_NESTING_MAX} levels of objects and arrays` },
    ]);
  });

  it('refuses a body nested as deep as 128 KB allows without overflowing the stack', () => {
    expect(refusal(nestedArrays(65_536)).code).toBe('INVALID_REQUEST');
    expect(refusal(nestedObjects(20_000)).code).toBe('INVALID_REQUEST');
  });

  it('refuses a lone surrogate in a string value, naming its path', () => {
    const answer = refusal('{"state":{"name":"ok","notes":["fine","bad \\ud800 here"]}}');
    expect(answer).toMatchObject({
      code: 'INVALID_REQUEST',
      status: 400,
      message: 'The request body holds text that cannot be stored: not well-formed Unicode, or U+0000.',
    });
    expect(answer.details).toEqual([{ path: 'state.notes.1', message: 'is a string that is not well-formed Unicode (a lone UTF-16 surrogate)' }]);
  });

  it.each([
    ['a high surrogate at the end', '"x\\ud83d"'],
    ['a low surrogate alone', '"\\udc00x"'],
    ['two high surrogates', '"\\ud83d\\ud83d"'],
    ['a pair in the wrong order', '"\\ude00\\ud83d"'],
  ])('refuses %s', (_what, text) => {
    expect(refusal(`{"state":${text}}`).details).toEqual([{ path: 'state', message: 'is a string that is not well-formed Unicode (a lone UTF-16 surrogate)' }]);
  });

  it('accepts surrogate pairs, escaped or not', () => {
    expect(parseJsonBody('{"a":"\\ud83d\\ude00","b":"😀"}')).toEqual({ a: '😀', b: '😀' });
  });

  it('refuses a lone surrogate in a property name, printing the name without it', () => {
    expect(refusal('{"state":{"ab\\udfffc":1}}').details).toEqual([
      { path: 'state.ab\ufffdc', message: 'has a property name that is not well-formed Unicode (a lone UTF-16 surrogate)' },
    ]);
  });

  it('refuses U+0000 in strings and property names, which PostgreSQL cannot store', () => {
    expect(refusal('{"name":"a\\u0000b"}').details).toEqual([{ path: 'name', message: 'is a string that contains U+0000' }]);
    expect(refusal('{"x\\u0000":true}').details).toEqual([{ path: 'x\ufffd', message: 'has a property name that contains U+0000' }]);
  });

  it(`lists every problem in document order, up to ${JSON_BODY_PROBLEMS_MAX}`, () => {
    expect(bodyProblems({ a: '\ud800', b: ['ok', '\udc00'] })).toEqual([
      { path: 'a', message: 'is a string that is not well-formed Unicode (a lone UTF-16 surrogate)' },
      { path: 'b.1', message: 'is a string that is not well-formed Unicode (a lone UTF-16 surrogate)' },
    ]);
    expect(bodyProblems(Array(100).fill('\ud800'))).toHaveLength(JSON_BODY_PROBLEMS_MAX);
  });

  it('accepts every well-formed JSON value without U+0000 and within the nesting limit', () => {
    const storableText = fc.string({ unit: 'grapheme' }).filter((text) => !text.includes('\u0000'));
    const storable = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        storableText,
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(
          storableText.filter((key) => key !== '__proto__'),
          tie('value'),
          { maxKeys: 4 },
        ),
      ),
    })).value;
    fc.assert(
      fc.property(storable, (value) => {
        const text = JSON.stringify(value);
        expect(parseJsonBody(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it('refuses every string holding a lone surrogate, wherever it sits', () => {
    const lone = fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit));
    fc.assert(
      fc.property(fc.string(), lone, fc.string({ unit: 'grapheme-ascii' }), fc.nat(3), (before, surrogate, after, depth) => {
        let value: unknown = `${before}${surrogate}${after}`;
        // A trailing "after" that starts with the partner of a high surrogate would make a valid pair.
        fc.pre(/\p{Surrogate}/u.test(value as string));
        for (let i = 0; i < depth; i++) value = { field: [value] };
        expect(refusal(JSON.stringify(value)).code).toBe('INVALID_REQUEST');
      }),
      { numRuns: 300 },
    );
  });
});

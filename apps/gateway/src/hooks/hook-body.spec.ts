import { ServiceError } from '@ds/contracts';
import { hookRunBody } from './hook-body';

function refusal(contentType: string | undefined, raw: string | null): ServiceError {
  try {
    hookRunBody(contentType, raw);
  } catch (error) {
    return error as ServiceError;
  }
  throw new Error('expected a refusal');
}

describe('hookRunBody', () => {
  it('unwraps an object whose only key is state', () => {
    expect(hookRunBody('application/json', '{"state":{"message":"hi"}}')).toEqual({ state: { message: 'hi' } });
    expect(hookRunBody('application/json', '{"state":{"state":1}}')).toEqual({ state: { state: 1 } });
    expect(hookRunBody('application/json', '{"state":null}')).toEqual({ state: null });
  });

  it('takes anything else as the state itself', () => {
    expect(hookRunBody('application/json', '{"message":"hi"}')).toEqual({ state: { message: 'hi' } });
    expect(hookRunBody('application/json', '{"state":1,"other":2}')).toEqual({ state: { state: 1, other: 2 } });
    expect(hookRunBody('application/json', '[1,2]')).toEqual({ state: [1, 2] });
    expect(hookRunBody('application/json', '"a text"')).toEqual({ state: 'a text' });
    expect(hookRunBody('application/json', '42')).toEqual({ state: 42 });
    expect(hookRunBody('application/json', '{}')).toEqual({ state: {} });
  });

  it('reads every content type but text/plain as JSON, a missing one included', () => {
    for (const type of [undefined, 'application/json; charset=utf-8', 'application/x-www-form-urlencoded', 'text/html', 'text/plainer']) {
      expect(hookRunBody(type, '{"state":"x"}')).toEqual({ state: 'x' });
    }
  });

  it('sends text/plain as a text state, untouched', () => {
    expect(hookRunBody('text/plain', '{"state":"x"}')).toEqual({ state: '{"state":"x"}' });
    expect(hookRunBody('Text/Plain; charset=utf-8', '  spaced  ')).toEqual({ state: '  spaced  ' });
  });

  it('refuses an empty body, invalid JSON and text it cannot store with 400', () => {
    for (const [type, raw] of [
      ['application/json', null],
      ['application/json', ''],
      ['text/plain', ''],
      ['application/json', '   '],
      ['application/json', '{"state":'],
      [undefined, 'not json'],
      ['application/json', '{"__proto__":{"polluted":true}}'],
      ['text/plain', 'a\u0000b'],
    ] as Array<[string | undefined, string | null]>) {
      const error = refusal(type, raw);
      expect(error).toBeInstanceOf(ServiceError);
      expect(error.code).toBe('INVALID_REQUEST');
    }
  });
});

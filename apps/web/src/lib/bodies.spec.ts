import { shownBody } from './bodies';

describe('shownBody', () => {
  it('pretty-prints JSON when the content type says so or says nothing', () => {
    expect(shownBody('{"a":1,"b":[true]}', 'application/json; charset=utf-8')).toEqual({ text: '{\n  "a": 1,\n  "b": [\n    true\n  ]\n}', json: true });
    expect(shownBody('{"a":1}', 'application/problem+json')).toEqual({ text: '{\n  "a": 1\n}', json: true });
    expect(shownBody('[1]', null)).toEqual({ text: '[\n  1\n]', json: true });
  });

  it('shows other text, and JSON that does not parse, as it came', () => {
    expect(shownBody('{"a":1}', 'text/plain')).toEqual({ text: '{"a":1}', json: false });
    expect(shownBody('{"a":1,"b":"cut', 'application/json')).toEqual({ text: '{"a":1,"b":"cut', json: false });
    expect(shownBody('ok', undefined)).toEqual({ text: 'ok', json: false });
  });
});

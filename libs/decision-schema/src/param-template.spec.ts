import { referencedParams, renderTemplate, renderTemplateWithin } from './param-template';

describe('referencedParams', () => {
  it('lists each name once, in order, with or without spaces', () => {
    expect(referencedParams('{{params.a}} {{ params.b }} {{params.a}} {{state.x}} {params.c}')).toEqual(['a', 'b']);
  });
});

describe('renderTemplate', () => {
  it('substitutes text as is, other values as JSON, and nothing for absent values', () => {
    const params = { name: 'Ana', amount: 12.5, tags: ['vip'], nothing: null };
    expect(renderTemplate('Hi {{params.name}}, {{ params.amount }} {{params.tags}} [{{params.nothing}}] [{{params.undeclared}}]', params)).toBe(
      'Hi Ana, 12.5 ["vip"] [] []',
    );
  });

  it('does not read Object.prototype', () => {
    expect(renderTemplate('{{params.constructor}}', {})).toBe('');
  });
});

describe('renderTemplateWithin', () => {
  it('renders like renderTemplate while the result fits', () => {
    const params = { name: 'Ana', tags: ['vip'] };
    const text = '{{params.name}} {{params.tags}} {{params.name}}';
    expect(renderTemplateWithin(text, params, 100)).toBe(renderTemplate(text, params));
    expect(renderTemplateWithin(text, params, 'Ana ["vip"] Ana'.length)).toBe('Ana ["vip"] Ana');
  });

  it('answers null once the result would pass the limit, however the text repeats a value', () => {
    const params = { big: 'x'.repeat(1_000) };
    expect(renderTemplateWithin('{{params.big}}'.repeat(300), params, 4_000)).toBeNull();
    expect(renderTemplateWithin('{{params.big}}'.repeat(4), params, 4_000)).toHaveLength(4_000);
    expect(renderTemplateWithin(`${'y'.repeat(4_001)}`, {}, 4_000)).toBeNull();
  });
});

describe('renderTemplateWithin in json format', () => {
  it('escapes text values as the inside of a JSON string, so they cannot break out of it', () => {
    const params = { name: 'Ana "the boss"\n}', amount: 3, tags: ['a"b'] };
    const body = renderTemplateWithin('{"name": "{{params.name}}", "amount": {{params.amount}}, "tags": {{params.tags}}}', params, 1_000, 'json')!;
    expect(JSON.parse(body)).toEqual({ name: 'Ana "the boss"\n}', amount: 3, tags: ['a"b'] });
  });

  it('counts the escaped length against the limit', () => {
    expect(renderTemplateWithin('{{params.q}}', { q: '""' }, 4, 'json')).toBe('\\"\\"');
    expect(renderTemplateWithin('{{params.q}}', { q: '"""' }, 4, 'json')).toBeNull();
  });
});

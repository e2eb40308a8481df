import { referencedParams, renderTemplate } from './param-template';

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

import { ensureSyntaxTree } from '@codemirror/language';
import { EditorState } from '@codemirror/state';
import { json } from '@codemirror/lang-json';
import { pathRange } from './json-locate';

const text = JSON.stringify(
  {
    state: { type: 'object', fields: { address: { type: 'object', fields: { street: { type: 'string' } } } } },
    questions: [{ key: 'intent' }, { key: 'urgency', levels: ['calm', 'upset'] }],
  },
  null,
  2,
);

function stateOf(source: string): EditorState {
  const state = EditorState.create({ doc: source, extensions: [json()] });
  ensureSyntaxTree(state, state.doc.length, 5_000);
  return state;
}

const at = (source: string, path: string) => {
  const state = stateOf(source);
  const { from, to } = pathRange(state, path);
  return { line: state.doc.lineAt(from).number, text: state.sliceDoc(from, to) };
};
const lineOf = (needle: string) => text.split('\n').findIndex((line) => line.includes(needle)) + 1;

describe('pathRange', () => {
  it('finds a property by its name, down through objects', () => {
    expect(at(text, 'state.fields.address.fields.street')).toEqual({ line: lineOf('"street"'), text: '"street"' });
    expect(at(text, 'state.type')).toEqual({ line: lineOf('"type": "object"'), text: '"type"' });
  });

  it('finds array items by position', () => {
    expect(at(text, 'questions.1.key').line).toBe(lineOf('"urgency"'));
    expect(at(text, 'questions.1.levels.1')).toEqual({ line: lineOf('"upset"'), text: '"upset"' });
  });

  it('reads property names as JSON, escapes included', () => {
    expect(at('{"caf\\u00e9": {"x": 1}}', 'café.x').text).toBe('"x"');
  });

  it('stops at the nearest enclosing part when the path goes further than the text', () => {
    expect(at(text, 'questions.0.options.2.value')).toEqual(at(text, 'questions.0'));
    expect(at(text, 'questions.0').text).toMatch(/^\{\s+"key": "intent"\s+\}$/);
    expect(at(text, 'questions.7').text).toBe('"questions"');
    expect(at(text, 'nothing').line).toBe(1);
    expect(at(text, '').line).toBe(1);
  });
});

import { ensureSyntaxTree, syntaxTree } from '@codemirror/language';
import type { EditorState } from '@codemirror/state';
import type { SyntaxNode } from '@lezer/common';

/**
 * The text a dotted path points at: a property's name, an array's item, or the nearest enclosing value when the
 * path goes further than the text (an issue about a missing property sits on its object).
 */
function locate(state: EditorState, value: SyntaxNode, path: string[]): SyntaxNode {
  let node = value;
  let marker: SyntaxNode = value;
  for (const part of path) {
    let next: SyntaxNode | null = null;
    let nextMarker: SyntaxNode | null = null;
    if (node.name === 'Object') {
      for (let child = node.firstChild; child; child = child.nextSibling) {
        if (child.name !== 'Property') continue;
        const name = child.getChild('PropertyName');
        if (name && propertyName(state.sliceDoc(name.from, name.to)) === part) {
          nextMarker = name;
          next = name.nextSibling && name.nextSibling.name !== ':' ? name.nextSibling : (child.lastChild ?? name);
        }
      }
    } else if (node.name === 'Array' && /^\d+$/.test(part)) {
      let index = 0;
      for (let child = node.firstChild; child; child = child.nextSibling) {
        if (child.name === '[' || child.name === ']' || child.name === ',' || child.type.isError) continue;
        if (index++ === Number(part)) {
          next = child;
          nextMarker = child;
          break;
        }
      }
    }
    if (!next || !nextMarker) break;
    node = next;
    marker = nextMarker;
  }
  return marker;
}

function propertyName(raw: string): string {
  try {
    return String(JSON.parse(raw));
  } catch {
    return raw;
  }
}

/** A schema's text parses in milliseconds; this only bounds a pathological one. */
const FULL_PARSE_BUDGET_MS = 2_000;

/** Where a validator path ("questions.0.options.1.value") is in JSON text parsed by the JSON language; 0 when it has no value. */
export function pathRange(state: EditorState, path: string): { from: number; to: number } {
  // CodeMirror parses in slices of time, so on a busy machine the tree it holds may end before the text does; a
  // path past that point would land on the deepest part parsed so far. Finish the parse first.
  const tree = ensureSyntaxTree(state, state.doc.length, FULL_PARSE_BUDGET_MS) ?? syntaxTree(state);
  const top = tree.topNode.firstChild;
  if (!top) return { from: 0, to: 0 };
  const node = locate(state, top, path === '' ? [] : path.split('.'));
  return { from: node.from, to: node.to };
}

import { useEffect, useRef, useState } from 'react';
import { EditorView, minimalSetup } from 'codemirror';
import { EditorState, Text } from '@codemirror/state';
import { lineNumbers, highlightActiveLine, highlightActiveLineGutter } from '@codemirror/view';
import { json, jsonParseLinter } from '@codemirror/lang-json';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags } from '@lezer/highlight';
import { Diagnostic, forceLinting, linter, lintGutter } from '@codemirror/lint';
import type { SchemaIssue } from '@ds/decision-schema';
import { useApp } from '../context';
import { describePath } from '../lib/wording';
import { pathRange } from '../lib/json-locate';

/** How many of its own texts the editor remembers while they travel through React and back. */
const MAX_UNANSWERED_TEXTS = 100;

/** One problem in the text, where it is: a syntax error or one of the validator's issues. */
export interface TextProblem {
  from: number;
  to: number;
  line: number;
  column: number;
  message: string;
}

/**
 * The schema as JSON text in CodeMirror: line numbers, the syntax error and the validator's issues as diagnostics at
 * their line, and a list of them whose entries put the cursor on that line.
 *
 * CodeMirror injects its styles at run time. Under the app's `style-src 'self'` a `<style>` element in the document
 * is refused, but a constructed style sheet adopted by a shadow root is not subject to style-src, and CodeMirror
 * (style-mod) adopts its sheet when its root is a shadow root. So the editor lives in a shadow root: no nonce, and
 * the CSP stays as strict as it is. Its theme reads the app's colour variables, which cross the shadow boundary.
 *
 * Tab is not bound (no indent-with-Tab), so Tab and Shift+Tab leave the editor as from any text field.
 */
export function JsonView({
  text,
  onChange,
  issues,
  doc,
  readOnly,
}: {
  text: string;
  onChange: (text: string) => void;
  issues: SchemaIssue[];
  doc: unknown;
  readOnly: boolean;
}) {
  const { t } = useApp();
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const latest = useRef({ onChange, issues, doc, t });
  latest.current = { onChange, issues, doc, t };
  const [problems, setProblems] = useState<TextProblem[]>([]);
  // Texts this editor handed to onChange that have not come back as `text` yet. Typing outruns React: a render can
  // bring back an older text of ours while newer keystrokes are already in the editor, and writing that over the
  // editor would undo them. Only a text that is not one of ours replaces what is in the editor.
  const sent = useRef<string[]>([]);

  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const shadow = element.shadowRoot ?? element.attachShadow({ mode: 'open' });
    const parent = document.createElement('div');
    shadow.replaceChildren(parent);
    const syntax = jsonParseLinter();
    const editor = new EditorView({
      root: shadow,
      parent,
      state: EditorState.create({
        doc: text,
        extensions: [
          minimalSetup,
          lineNumbers(),
          highlightActiveLine(),
          highlightActiveLineGutter(),
          json(),
          lintGutter(),
          linter(
            (current) => {
              const broken = syntax(current);
              const found = broken.length > 0 ? broken : schemaDiagnostics(current.state, latest.current.issues, latest.current.doc, latest.current.t);
              setProblems(found.map((diagnostic) => toProblem(current.state.doc, diagnostic)));
              return found;
            },
            { delay: 250 },
          ),
          EditorState.readOnly.of(readOnly),
          EditorView.editable.of(!readOnly),
          EditorView.contentAttributes.of({ 'aria-label': t('ed.json'), 'aria-multiline': 'true', id: 'schema-json' }),
          EditorView.updateListener.of((update) => {
            if (!update.docChanged) return;
            const next = update.state.doc.toString();
            sent.current.push(next);
            if (sent.current.length > MAX_UNANSWERED_TEXTS) sent.current.shift();
            latest.current.onChange(next);
          }),
          theme,
          syntaxHighlighting(highlight),
          // Wrapped lines: no sideways scrolling at 360 px, and the editor grows with the page instead of being a
          // second scrolling region inside it.
          EditorView.lineWrapping,
        ],
      }),
    });
    view.current = editor;
    return () => {
      editor.destroy();
      view.current = null;
    };
    // The editor is built once per mount and per read-only switch; text and issues reach it below.
  }, [readOnly]);

  useEffect(() => {
    const editor = view.current;
    if (!editor) return;
    const ours = sent.current.indexOf(text);
    if (ours >= 0) {
      sent.current.splice(0, ours + 1);
      return;
    }
    sent.current = [];
    if (editor.state.doc.toString() === text) return;
    editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: text } });
  }, [text]);

  useEffect(() => {
    if (view.current) forceLinting(view.current);
  }, [issues]);

  const goTo = (problem: TextProblem) => {
    const editor = view.current;
    if (!editor) return;
    editor.dispatch({ selection: { anchor: problem.from }, scrollIntoView: true });
    editor.focus();
  };

  return (
    <div className="json-editor">
      <span id="schema-json-label">{t('ed.json')}</span>
      <div ref={host} className="json-host" />
      {problems.length > 0 && (
        <ul className="issues bad json-problems" aria-label={t('ed.jsonProblems')}>
          {problems.map((problem, index) => (
            <li key={index}>
              <button type="button" className="link" onClick={() => goTo(problem)}>
                {t('ed.jsonGoTo', { line: problem.line })}
              </button>{' '}
              {t('ed.jsonLine', { line: problem.line, column: problem.column, message: problem.message })}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function toProblem(doc: Text, diagnostic: Diagnostic): TextProblem {
  const line = doc.lineAt(diagnostic.from);
  return { from: diagnostic.from, to: diagnostic.to, line: line.number, column: diagnostic.from - line.from + 1, message: diagnostic.message };
}

function schemaDiagnostics(state: EditorState, issues: SchemaIssue[], doc: unknown, t: ReturnType<typeof useApp>['t']): Diagnostic[] {
  return issues.map((issue) => {
    const { from, to } = pathRange(state, issue.path);
    const where = issue.path === '' ? '' : `${describePath(issue.path, doc, t)}: `;
    return { from, to, severity: 'error', message: `${where}${issue.message}` };
  });
}

// The app's own colours, which meet the contrast minimum on its surfaces in both themes (CodeMirror's default
// highlight colours do not on a dark one).
const highlight = HighlightStyle.define([
  { tag: tags.propertyName, color: 'var(--accent)' },
  { tag: tags.string, color: 'var(--ok)' },
  { tag: [tags.number, tags.bool, tags.null], color: 'var(--danger)' },
  { tag: tags.invalid, color: 'var(--danger)', textDecoration: 'underline' },
]);

const theme = EditorView.theme({
  '&': {
    color: 'var(--text)',
    backgroundColor: 'var(--surface)',
    border: '1px solid var(--border)',
    borderRadius: '6px',
    fontSize: '0.9rem',
  },
  '&.cm-focused': { outline: '3px solid var(--focus)', outlineOffset: '2px' },
  '.cm-scroller': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', overflow: 'auto' },
  '.cm-content': { caretColor: 'var(--text)' },
  '.cm-cursor': { borderLeftColor: 'var(--text)' },
  '.cm-gutters': { backgroundColor: 'var(--code-bg)', color: 'var(--muted)', borderRight: '1px solid var(--border)' },
  '.cm-activeLine': { backgroundColor: 'var(--code-bg)' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--border)', color: 'var(--text)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': { backgroundColor: 'var(--border)' },
  '.cm-tooltip': { backgroundColor: 'var(--surface)', color: 'var(--text)', border: '1px solid var(--border)' },
  '.cm-diagnostic-error': { borderLeftColor: 'var(--danger)' },
});

// @ts-check
const { existsSync, readFileSync } = require('node:fs');
const { dirname, extname, join, relative, resolve, sep } = require('node:path');
const ts = require('typescript');

/**
 * `local/no-import-cycle`: no file may reach itself through static imports, type-only imports included (a circle of
 * types is still one idea split across files that cannot be read one at a time). `import()` does not count: a screen
 * loaded by route is meant to be reached that way. `@ds/*` names are followed through the root tsconfig.json's
 * paths, so a circle between libraries is found too; packages under node_modules are not followed.
 *
 * The import graph is read once per lint process and kept: each file's static imports from disk (the file being
 * linted from its text as ESLint holds it), then strongly connected components (Tarjan), so an import is on a circle
 * exactly when both ends are in one component; only then is the shortest way back looked for, to name it.
 */

const EXTENSIONS = new Set(['.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs', '.jsx']);

/** @param {string} file */
function scriptKind(file) {
  const ext = extname(file);
  if (ext === '.tsx') return ts.ScriptKind.TSX;
  if (ext === '.jsx') return ts.ScriptKind.JSX;
  if (ext === '.js' || ext === '.mjs' || ext === '.cjs') return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

/** The specifiers of a file's static imports and re-exports, `import type` and `export type … from` included. */
function staticSpecifiers(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, scriptKind(file));
  /** @type {string[]} */
  const specifiers = [];
  for (const statement of source.statements) {
    if ((ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier))
      specifiers.push(statement.moduleSpecifier.text);
    else if (
      ts.isImportEqualsDeclaration(statement) &&
      ts.isExternalModuleReference(statement.moduleReference) &&
      ts.isStringLiteral(statement.moduleReference.expression)
    )
      specifiers.push(statement.moduleReference.expression.text);
  }
  return specifiers;
}

/** Finds the repository's tsconfig.json above `file`, whose `paths` name the `@ds/*` libraries. */
function rootConfigOf(file) {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'tsconfig.json')) && existsSync(join(dir, 'package.json'))) return join(dir, 'tsconfig.json');
    if (dirname(dir) === dir) return null;
  }
}

class ImportGraph {
  /** @param {string} configFile */
  constructor(configFile) {
    this.root = dirname(configFile);
    const read = ts.readConfigFile(configFile, ts.sys.readFile);
    const paths = read.config?.compilerOptions?.paths ?? {};
    // Bundler resolution takes every way the repository writes an import (extensionless, `.tsx`, index files).
    this.options = {
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      module: ts.ModuleKind.ESNext,
      allowJs: true,
      allowImportingTsExtensions: true,
      jsx: ts.JsxEmit.ReactJSX,
      baseUrl: this.root,
      paths,
    };
    this.cache = ts.createModuleResolutionCache(this.root, (name) => name, this.options);
    /** @type {Map<string, string[]>} file → the repository files it imports statically */
    this.edges = new Map();
    /** @type {Map<string, string>} file → its text when read, so that an edited file is noticed */
    this.texts = new Map();
    this.forgetComponents();
  }

  /** Tarjan's state, kept between files (a component found once is final) until a file's imports change. */
  forgetComponents() {
    /** @type {Map<string, number>} */ this.index = new Map();
    /** @type {Map<string, number>} */ this.low = new Map();
    /** @type {Map<string, number>} */ this.component = new Map();
    /** @type {string[]} */ this.stack = [];
    /** @type {Set<string>} */ this.onStack = new Set();
    this.counter = 0;
  }

  /** `file` now reads `text` (an editor lints as one types): its imports are read again, the components found anew. */
  changed(file, text) {
    this.edges.delete(file);
    this.importsOf(file, text);
    this.forgetComponents();
  }

  /** @param {string} specifier @param {string} from */
  resolve(specifier, from) {
    const found = ts.resolveModuleName(specifier, from, this.options, ts.sys, this.cache).resolvedModule;
    if (!found || found.isExternalLibraryImport) return null;
    const file = resolve(found.resolvedFileName);
    if (file.endsWith('.d.ts') || !EXTENSIONS.has(extname(file)) || file.split(sep).includes('node_modules')) return null;
    return relative(this.root, file).startsWith('..') ? null : file;
  }

  /** @param {string} file @param {string} [text] */
  importsOf(file, text) {
    const known = this.edges.get(file);
    if (known) return known;
    const source = text ?? readFileSync(file, 'utf8');
    this.texts.set(file, source);
    /** @type {string[]} */
    const targets = [];
    for (const specifier of staticSpecifiers(file, source)) {
      const target = this.resolve(specifier, file);
      if (target !== null && !targets.includes(target)) targets.push(target);
    }
    this.edges.set(file, targets);
    return targets;
  }

  /** Tarjan's algorithm from `start`, without recursion (an import chain may be long). */
  connect(start) {
    if (this.index.has(start)) return;
    /** @type {Array<{ file: string, next: number }>} */
    const work = [{ file: start, next: 0 }];
    this.visit(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const targets = this.importsOf(frame.file);
      if (frame.next < targets.length) {
        const target = targets[frame.next++];
        if (!this.index.has(target)) {
          this.visit(target);
          work.push({ file: target, next: 0 });
        } else if (this.onStack.has(target)) this.low.set(frame.file, Math.min(this.low.get(frame.file), this.index.get(target)));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) this.low.set(parent.file, Math.min(this.low.get(parent.file), this.low.get(frame.file)));
      if (this.low.get(frame.file) === this.index.get(frame.file)) {
        const id = this.index.get(frame.file);
        let member;
        do {
          member = this.stack.pop();
          this.onStack.delete(member);
          this.component.set(member, id);
        } while (member !== frame.file);
      }
    }
  }

  /** @param {string} file */
  visit(file) {
    this.index.set(file, this.counter);
    this.low.set(file, this.counter);
    this.counter++;
    this.stack.push(file);
    this.onStack.add(file);
  }

  /** The shortest chain of imports from `from` back to `to`, both included; null when there is none. */
  pathBetween(from, to) {
    /** @type {Map<string, string | null>} */
    const previous = new Map([[from, null]]);
    const queue = [from];
    while (queue.length > 0) {
      const file = queue.shift();
      if (file === to) {
        const chain = [];
        for (let at = to; at !== null && at !== undefined; at = previous.get(at)) chain.unshift(at);
        return chain;
      }
      for (const target of this.importsOf(file))
        if (!previous.has(target)) {
          previous.set(target, file);
          queue.push(target);
        }
    }
    return null;
  }
}

/** @type {Map<string, ImportGraph>} */
const graphs = new Map();

/** The graph for `file`'s repository, with `file`'s imports as its text holds them now. */
function graphFor(file, text) {
  const config = rootConfigOf(file);
  if (config === null) return null;
  let graph = graphs.get(config);
  if (!graph) {
    graph = new ImportGraph(config);
    graphs.set(config, graph);
  }
  const seen = graph.texts.get(file);
  if (seen !== undefined && seen !== text) graph.changed(file, text);
  else graph.importsOf(file, text);
  return graph;
}

/** @type {import('eslint').Rule.RuleModule} */
const noImportCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid a chain of static imports (type-only ones included) that leads back to the importing file.' },
    schema: [],
    messages: { cycle: 'Import circle: {{chain}}. Move what both sides need into one file, or have one side stop importing the other.' },
  },
  create(context) {
    const file = resolve(context.filename);
    if (!EXTENSIONS.has(extname(file))) return {};
    const graph = graphFor(file, context.sourceCode.text);
    if (graph === null) return {};
    graph.connect(file);
    /** @param {import('estree').Node & { source?: import('estree').Literal | null }} node */
    const check = (node) => {
      if (!node.source || typeof node.source.value !== 'string') return;
      const target = graph.resolve(node.source.value, file);
      if (target === null) return;
      graph.connect(target);
      if (graph.component.get(target) !== graph.component.get(file)) return;
      const back = graph.pathBetween(target, file);
      if (back === null) return;
      const chain = [file, ...back].map((one) => relative(graph.root, one).split(sep).join('/')).join(' → ');
      context.report({ node: node.source, messageId: 'cycle', data: { chain } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};

// CommonJS, so that eslint.config.mjs and the rule's own test (under jest) load the same file.
module.exports = { rules: { 'no-import-cycle': noImportCycle }, noImportCycle };

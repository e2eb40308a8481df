#!/usr/bin/env node
// Checks that every value of helm/decision-service/values.yaml is documented where it is declared:
// the comment lines directly above each leaf key must contain `## @param <full.path> <description>`,
// and every `@param` must name a value that exists. Only Node built-ins; understands the subset of
// YAML the chart's values.yaml uses (block maps, inline scalars/[]/{}, block lists as leaves).
//
//   node deploy/tools/check-values-docs.mjs [path/to/values.yaml]
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const file = process.argv[2] ?? join(here, '..', '..', 'helm', 'decision-service', 'values.yaml');
const lines = readFileSync(file, 'utf8').split('\n');

const indentOf = (l) => l.length - l.trimStart().length;
const isBlank = (l) => l.trim() === '';
const isComment = (l) => l.trimStart().startsWith('#');
const keyRe = /^(\s*)([A-Za-z0-9_.\/-]+):(?:\s+(.*))?$/;
const paramRe = /@param\s+(\S+)\s+\S/;

const leaves = new Map(); // path -> line number
const params = new Map(); // path -> line number
const problems = [];
const stack = []; // { indent, key }

lines.forEach((l, i) => {
  const m = paramRe.exec(l);
  if (isComment(l) && m) {
    if (params.has(m[1])) problems.push(`${file}:${i + 1}: @param ${m[1]} documented twice`);
    params.set(m[1], i + 1);
  } else if (isComment(l) && /@param\s+\S+\s*$/.test(l)) {
    problems.push(`${file}:${i + 1}: @param without a description`);
  }
});

for (let i = 0; i < lines.length; i++) {
  const l = lines[i];
  if (isBlank(l) || isComment(l)) continue;
  const m = keyRe.exec(l);
  if (!m) {
    problems.push(`${file}:${i + 1}: cannot parse "${l.trim()}"`);
    continue;
  }
  const indent = m[1].length;
  const key = m[2];
  const inline = (m[3] ?? '').replace(/\s+#.*$/, '').trim();
  while (stack.length && stack[stack.length - 1].indent >= indent) stack.pop();
  const path = [...stack.map((s) => s.key), key].join('.');

  // Next meaningful line decides: nested map (parent), block list (leaf), nothing (null leaf).
  const keyLine = i;
  let j = i + 1;
  while (j < lines.length && (isBlank(lines[j]) || isComment(lines[j]))) j++;
  const next = lines[j];
  const nextIndent = next === undefined ? -1 : indentOf(next);
  if (inline === '') {
    if (next !== undefined && next.trimStart().startsWith('-') && nextIndent >= indent) {
      // block list: a leaf; skip its items
      let k = j;
      while (k < lines.length && (isBlank(lines[k]) || isComment(lines[k]) || indentOf(lines[k]) > indent ||
        (indentOf(lines[k]) === indent && lines[k].trimStart().startsWith('-')))) k++;
      i = k - 1;
    } else if (nextIndent > indent) {
      stack.push({ indent, key });
      continue;
    }
  }

  leaves.set(path, keyLine + 1);
  // The comment block right above the key must document it.
  let c = keyLine - 1;
  while (c >= 0 && isComment(lines[c])) c--;
  const block = lines.slice(c + 1, keyLine).join('\n') + '\n';
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (!new RegExp(`@param\\s+${escaped}\\s`).test(block)) {
    problems.push(`${file}:${keyLine + 1}: ${path} has no "## @param ${path} <description>" right above it`);
  }
}

for (const [p, n] of params) {
  if (!leaves.has(p)) problems.push(`${file}:${n}: @param ${p} names no value`);
}

if (problems.length) {
  console.error(problems.join('\n'));
  console.error(`${problems.length} documentation problem(s) in ${file}`);
  process.exit(1);
}
console.log(`values documented: ${leaves.size} values, ${params.size} @param lines`);

#!/usr/bin/env node
// @ts-check
/**
 * The longest functions of a source tree, by TypeScript's AST: every function-like node with a body (declarations,
 * methods, arrows, function expressions, accessors, constructors), its length in lines from its first token to its
 * last. The measure of docs/architecture.md's "small functions" rule, kept by test/architecture/function-length.test.ts.
 *
 *   node scripts/function-lengths.js [--over N] [DIR...]     default: --over 60 src
 */
'use strict';
const fs = require('fs');
const path = require('path');
const ts = require('typescript');

/** @param {string} dir @returns {string[]} */
function tsFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return tsFiles(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

/** @param {string[]} dirs @returns {{ file: string, line: number, name: string, lines: number }[]} */
function functionLengths(dirs) {
  /** @type {{ file: string, line: number, name: string, lines: number }[]} */
  const out = [];
  for (const file of dirs.flatMap(tsFiles)) {
    const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    /** @param {ts.Node} n */
    const visit = (n) => {
      if (ts.isFunctionLike(n) && 'body' in n && n.body) {
        const first = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
        const last = sf.getLineAndCharacterOfPosition(n.end).line;
        const named = /** @type {{ name?: ts.Node }} */ (n).name ?? /** @type {{ name?: ts.Node }} */ (n.parent).name;
        out.push({ file, line: first + 1, name: named ? named.getText(sf) : '<anonymous>', lines: last - first + 1 });
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return out.sort((a, b) => b.lines - a.lines);
}

module.exports = { functionLengths };

if (require.main === module) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--over');
  const over = at >= 0 ? Number(args.splice(at, 2)[1]) : 60;
  const dirs = args.length ? args : ['src'];
  const long = functionLengths(dirs).filter((f) => f.lines > over);
  for (const f of long) console.log(`${String(f.lines).padStart(4)}  ${f.file}:${f.line} ${f.name}`);
  console.log(`${long.length} function(s) over ${over} lines in ${dirs.join(', ')}`);
}

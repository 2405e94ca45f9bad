#!/usr/bin/env node
// @ts-check
/**
 * The longest functions of a source tree, by TypeScript's AST: every function-like node with a body (declarations,
 * methods, arrows, function expressions, accessors, constructors), its length in lines from its first token to its
 * last. The measure of docs/architecture.md's "small functions" rule, kept by test/architecture/function-length.test.ts.
 *
 * Two more measures of units a person can hold, the review's figures: files over N lines, and functions that take
 * N or more parameters (what the length rule does not see: a function kept short by a wider signature).
 *
 *   node scripts/function-lengths.js [--over N] [DIR...]     default: --over 60 src
 *   node scripts/function-lengths.js --files-over N [DIR...]   files of more than N lines (e.g. 500)
 *   node scripts/function-lengths.js --params N [DIR...]       functions with N or more parameters (e.g. 5 src/plugin)
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

/** @typedef {{ file: string, line: number, name: string, lines: number, params: number }} FunctionSize */

/** @param {string[]} dirs @returns {FunctionSize[]} */
function functionLengths(dirs) {
  /** @type {FunctionSize[]} */
  const out = [];
  for (const file of dirs.flatMap(tsFiles)) {
    const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    /** @param {ts.Node} n */
    const visit = (n) => {
      if (ts.isFunctionLike(n) && 'body' in n && n.body) {
        const first = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
        const last = sf.getLineAndCharacterOfPosition(n.end).line;
        const named = /** @type {{ name?: ts.Node }} */ (n).name ?? /** @type {{ name?: ts.Node }} */ (n.parent).name;
        out.push({
          file,
          line: first + 1,
          name: named ? named.getText(sf) : '<anonymous>',
          lines: last - first + 1,
          params: n.parameters.length,
        });
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return out.sort((a, b) => b.lines - a.lines);
}

/** @param {string[]} dirs @returns {{ file: string, lines: number }[]} */
function fileLengths(dirs) {
  return dirs
    .flatMap(tsFiles)
    .map((file) => ({ file, lines: fs.readFileSync(file, 'utf8').split('\n').length - 1 }))
    .sort((a, b) => b.lines - a.lines);
}

module.exports = { functionLengths, fileLengths };

/** @param {string[]} args @param {string} flag @returns {number | undefined} */
function option(args, flag) {
  const at = args.indexOf(flag);
  return at >= 0 ? Number(args.splice(at, 2)[1]) : undefined;
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const filesOver = option(args, '--files-over');
  const params = option(args, '--params');
  const over = option(args, '--over') ?? 60;
  const dirs = args.length ? args : ['src'];
  if (filesOver !== undefined) {
    const big = fileLengths(dirs).filter((f) => f.lines > filesOver);
    for (const f of big) console.log(`${String(f.lines).padStart(5)}  ${f.file}`);
    console.log(`${big.length} file(s) over ${filesOver} lines in ${dirs.join(', ')}`);
    process.exit(0);
  }
  if (params !== undefined) {
    const wide = functionLengths(dirs)
      .filter((f) => f.params >= params)
      .sort((a, b) => b.params - a.params || a.file.localeCompare(b.file) || a.line - b.line);
    for (const f of wide) console.log(`${String(f.params).padStart(3)}  ${f.file}:${f.line} ${f.name}`);
    console.log(`${wide.length} function(s) with ${params} or more parameters in ${dirs.join(', ')}`);
    process.exit(0);
  }
  const long = functionLengths(dirs).filter((f) => f.lines > over);
  for (const f of long) console.log(`${String(f.lines).padStart(4)}  ${f.file}:${f.line} ${f.name}`);
  console.log(`${long.length} function(s) over ${over} lines in ${dirs.join(', ')}`);
}

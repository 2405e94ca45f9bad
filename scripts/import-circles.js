#!/usr/bin/env node
// @ts-check
/**
 * The import circles of a source tree, read on TypeScript's AST: every relative `import` and `export … from`
 * (type-only ones included: a type that two modules both need belongs to one of them), `import()` and `require()`.
 * A circle is a strongly connected group of files (Tarjan); each is printed with one closed path through it, so the
 * edge to cut is visible. Kept at zero for the folders of test/architecture/import-circles.test.ts.
 *
 *   node scripts/import-circles.js [DIR...]     default: src
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

/** The relative module specifiers of one file, resolved to files (`x` → `x.ts` or `x/index.ts`). */
/** @param {string} file @returns {string[]} */
function importsOf(file) {
  const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  /** @type {string[]} */
  const specs = [];
  /** @param {ts.Node} n */
  const visit = (n) => {
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier) {
      if (ts.isStringLiteral(n.moduleSpecifier)) specs.push(n.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) {
      const e = n.moduleReference.expression;
      if (ts.isStringLiteral(e)) specs.push(e.text);
    } else if (ts.isCallExpression(n) && n.arguments.length === 1 && ts.isStringLiteral(n.arguments[0])) {
      const callee = n.expression;
      const isRequire = ts.isIdentifier(callee) && callee.text === 'require';
      if (isRequire || callee.kind === ts.SyntaxKind.ImportKeyword) specs.push(n.arguments[0].text);
    } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) {
      specs.push(n.argument.literal.text);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return specs
    .filter((s) => s.startsWith('.'))
    .map((s) => {
      const base = path.resolve(path.dirname(file), s).replace(/\.js$/, '');
      for (const c of [base + '.ts', path.join(base, 'index.ts'), base])
        if (fs.existsSync(c) && c.endsWith('.ts')) return c;
      return base + '.ts';
    });
}

/**
 * The circles among the files under `dirs`: groups of two or more files that reach each other (or one file that
 * imports itself), each with a closed path through it. Files are named relative to `root`.
 * @param {string[]} dirs @param {string} [root]
 * @returns {{ files: string[], path: string[] }[]}
 */
function importCircles(dirs, root = process.cwd()) {
  const files = dirs.flatMap(tsFiles).map((f) => path.resolve(f));
  const known = new Set(files);
  /** @type {Map<string, string[]>} */
  const edges = new Map(files.map((f) => [f, [...new Set(importsOf(f))].filter((t) => known.has(t))]));
  // Tarjan's strongly connected components.
  let counter = 0;
  /** @type {Map<string, number>} */ const index = new Map();
  /** @type {Map<string, number>} */ const low = new Map();
  /** @type {string[]} */ const stack = [];
  const onStack = new Set();
  /** @type {string[][]} */ const groups = [];
  /** @param {string} v */
  const connect = (v) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(/** @type {number} */ (low.get(v)), /** @type {number} */ (low.get(w))));
      } else if (onStack.has(w))
        low.set(v, Math.min(/** @type {number} */ (low.get(v)), /** @type {number} */ (index.get(w))));
    }
    if (low.get(v) === index.get(v)) {
      /** @type {string[]} */ const group = [];
      let w;
      do {
        w = /** @type {string} */ (stack.pop());
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1 || (edges.get(v) ?? []).includes(v)) groups.push(group);
    }
  };
  for (const f of files) if (!index.has(f)) connect(f);
  const rel = (/** @type {string} */ f) => path.relative(root, f);
  return groups
    .map((g) => ({ files: g.map(rel).sort(), path: closedPath(g, edges).map(rel) }))
    .sort((a, b) => a.files[0].localeCompare(b.files[0]));
}

/** A shortest closed path through a group, from its first file (by name) back to it. */
/** @param {string[]} group @param {Map<string, string[]>} edges @returns {string[]} */
function closedPath(group, edges) {
  const inGroup = new Set(group);
  const start = [...group].sort()[0];
  /** @type {Map<string, string>} */ const from = new Map();
  const queue = [start];
  while (queue.length) {
    const v = /** @type {string} */ (queue.shift());
    for (const w of edges.get(v) ?? []) {
      if (!inGroup.has(w)) continue;
      if (w === start) {
        const walk = [v];
        while (walk[0] !== start) walk.unshift(/** @type {string} */ (from.get(walk[0])));
        return [...walk, start];
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

module.exports = { importCircles, importsOf };

if (require.main === module) {
  const args = process.argv.slice(2);
  const dirs = args.length ? args : ['src'];
  const circles = importCircles(dirs);
  for (const c of circles) console.log(`${c.files.length} files: ${c.path.join(' → ')}`);
  console.log(`${circles.length} import circle(s) in ${dirs.join(', ')}`);
}

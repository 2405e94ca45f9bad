#!/usr/bin/env node
// @ts-check
/**
 * `npm run bench`: runs benchmark files one after another, each as its own child `node` process (a fresh heap and
 * JIT per benchmark, and a crash in one does not take the others down), streaming their output as it comes.
 *
 *   node bench/run.js                      every bench/*.bench.js and bench/*.bench.ts, in name order
 *   node bench/run.js native startup       only files whose name contains one of the words
 *   node bench/run.js bench/x.bench.js     an explicit file
 *   node bench/run.js --list               print what would run
 *
 * Benchmarks are plain CommonJS that require ../dist/...; this runner compiles dist (npm run build:ts) when it is
 * missing, and the addon (npm run build:native) when build/Release is. A .bench.ts file is transpiled on load
 * (TypeScript's transpileModule, no type check) through bench/ts-register.js. Each benchmark reports numbers and
 * ratios from one run; nothing here asserts on them. The exit code is non-zero when a benchmark itself failed.
 */
'use strict';

const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..');
const BENCH_DIR = __dirname;
const PATTERN = /\.bench\.(js|ts)$/;

function discover() {
  return fs
    .readdirSync(BENCH_DIR)
    .filter((f) => PATTERN.test(f))
    .sort()
    .map((f) => path.join(BENCH_DIR, f));
}

/** @param {string[]} args */
function select(args) {
  const all = discover();
  if (args.length === 0) return all;
  /** @type {string[]} */
  const out = [];
  for (const a of args) {
    const asPath = path.resolve(a);
    if (fs.existsSync(asPath) && fs.statSync(asPath).isFile()) {
      out.push(asPath);
      continue;
    }
    const hits = all.filter((f) => path.basename(f).includes(a));
    if (hits.length === 0) {
      console.error(
        `bench/run.js: no benchmark matches "${a}" (have: ${all.map((f) => path.basename(f)).join(', ') || 'none'})`,
      );
      process.exit(2);
    }
    out.push(...hits);
  }
  return [...new Set(out)];
}

/** @param {string} script */
function npmRun(script) {
  console.log(`bench/run.js: npm run ${script}`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['run', '--silent', script], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`bench/run.js: npm run ${script} failed (${r.signal ?? r.status})`);
    process.exit(1);
  }
}

function ensureBuilt() {
  const addon = path.join(ROOT, 'build', 'Release', 'hcn.node');
  if (!fs.existsSync(addon)) npmRun('build:native');
  const needed = ['dist/sim/index.js', 'dist/hns/native.js', 'dist/cli/hcn-sim.js'];
  if (needed.some((f) => !fs.existsSync(path.join(ROOT, f)))) npmRun('build:ts');
}

function main() {
  const argv = process.argv.slice(2);
  const listOnly = argv.includes('--list');
  const files = select(argv.filter((a) => a !== '--list'));
  if (listOnly) {
    for (const f of files) console.log(path.relative(ROOT, f));
    return;
  }
  if (files.length === 0) {
    console.log('bench/run.js: no benchmarks found (bench/*.bench.js|ts)');
    return;
  }
  ensureBuilt();

  /** @type {Array<{ file: string; status: number | null; signal: string | null; seconds: number }>} */
  const results = [];
  for (const file of files) {
    const rel = path.relative(ROOT, file);
    console.log(`\n=== ${rel} ${'='.repeat(Math.max(0, 72 - rel.length))}`);
    const args = file.endsWith('.ts') ? ['-r', path.join(BENCH_DIR, 'ts-register.js'), file] : [file];
    const started = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit', env: process.env });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (r.error) console.error(`bench/run.js: could not run ${rel}: ${r.error.message}`);
    results.push({ file: rel, status: r.status, signal: r.signal, seconds });
  }

  console.log(`\n=== summary ${'='.repeat(64)}`);
  for (const r of results) {
    const outcome = r.status === 0 ? 'ok' : `FAILED (${r.signal ?? `exit ${r.status}`})`;
    console.log(`${r.file.padEnd(40)} ${outcome.padEnd(16)} ${r.seconds.toFixed(1).padStart(6)} s`);
  }
  if (results.some((r) => r.status !== 0)) process.exitCode = 1;
}

main();

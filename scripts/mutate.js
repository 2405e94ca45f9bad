#!/usr/bin/env node
// @ts-check
/**
 * The mutation check of the safety code (docs/mutation.md): puts one small, plausible bug at a time into src/
 * (scripts/mutations.js: file, exact original text, replacement, the tests that should catch it), runs only those
 * tests, restores the file, and says whether the bug was caught (a test failed) or survived (every test passed).
 *
 *   node scripts/mutate.js                 every mutation
 *   node scripts/mutate.js --only a,b      these ids (or id prefixes ending in "*": --only 'detect-*')
 *   node scripts/mutate.js --list          the table, nothing run
 *   node scripts/mutate.js --json out.json the verdicts, for comparing two runs
 *   node scripts/mutate.js --dist          let dist/ be rebuilt with each mutation (default: in-process tests only,
 *                                          but an entry with `dist: true`, whose test runs the plugin as a process)
 *
 * The file is always restored: after each run, on Ctrl-C / SIGTERM (the jest child's process group is killed first),
 * and, should this process itself be killed hard, by the next run, from a copy kept outside the tree before any write
 * (os.tmpdir()/hcn-cni-mutate-<hash of the checkout>.json). By default the mutated file keeps its modification time, so
 * jest's global setup does not rebuild dist/ for it: a test that runs the plugin as a child process (dist/) does not see
 * the mutation. List in-process tests; --dist makes the mutations visible to child processes (one tsc build each).
 */
'use strict';

const { spawn } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { MUTATIONS } = require('./mutations');
const { ensureDist } = require('./fresh-dist');

/** Seconds one mutation's tests may take before the run is killed and reported as an error. */
const RUN_LIMIT_S = Number(process.env.MUTATE_RUN_LIMIT_S || 600);

const ROOT = path.resolve(__dirname, '..');
const RESTORE = path.join(
  os.tmpdir(),
  `hcn-cni-mutate-${crypto.createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}.json`,
);

/** @typedef {{ file: string, text: string, atime: number, mtime: number }} Saved */

/** Puts back a file a previous run left mutated (it was killed before it could restore it). */
function restoreLeftover() {
  if (!fs.existsSync(RESTORE)) return;
  /** @type {Saved} */
  const saved = JSON.parse(fs.readFileSync(RESTORE, 'utf8'));
  restore(saved);
  process.stderr.write(`mutate: restored ${path.relative(ROOT, saved.file)}, left mutated by an interrupted run\n`);
}

/** @param {Saved} saved */
function restore(saved) {
  fs.writeFileSync(saved.file, saved.text);
  fs.utimesSync(saved.file, saved.atime / 1000, saved.mtime / 1000);
  fs.rmSync(RESTORE, { force: true });
}

function parseArgs(argv) {
  const o = { only: /** @type {string[] | undefined} */ (undefined), list: false, json: '', dist: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--only')
      o.only = String(argv[++i] ?? '')
        .split(',')
        .filter(Boolean);
    else if (a === '--list') o.list = true;
    else if (a === '--json') o.json = String(argv[++i] ?? '');
    else if (a === '--dist') o.dist = true;
    else if (a === '--help' || a === '-h') {
      process.stdout.write(fs.readFileSync(__filename, 'utf8').split('*/')[0] + '*/\n');
      process.exit(0);
    } else throw new Error(`unknown argument ${a} (see --help)`);
  }
  return o;
}

/** @param {string} id @param {string[] | undefined} only */
function selected(id, only) {
  if (!only) return true;
  return only.some((p) => (p.endsWith('*') ? id.startsWith(p.slice(0, -1)) : id === p));
}

/** @type {import('child_process').ChildProcess | undefined} */
let child;
/** @type {Saved | undefined} */
let current;

function onSignal(signal) {
  if (child?.pid) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (current) restore(current);
  process.stderr.write(
    `\nmutate: ${signal}; ${current ? `restored ${path.relative(ROOT, current.file)}` : 'nothing to restore'}\n`,
  );
  process.exit(130);
}

/**
 * Runs jest on the mutation's tests; resolves with the failed tests' names, or an error when a suite could not run.
 * @param {{ tests: string[], grep?: string }} m
 */
function runTests(m) {
  const out = path.join(os.tmpdir(), `hcn-cni-mutate-${process.pid}-result.json`);
  fs.rmSync(out, { force: true });
  const files = m.tests.filter((t) => fs.existsSync(path.join(ROOT, t)));
  if (files.length === 0) return Promise.resolve({ failed: [], ran: 0, error: '' });
  const args = [
    path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
    '--ci',
    '--silent',
    // A mutation can leave a server or child of a test open (a hand-over test whose peer check the mutation removed):
    // jest has written its verdict by then, and waiting for the handle would hang the whole table.
    '--forceExit',
    '--passWithNoTests',
    '--json',
    `--outputFile=${out}`,
    ...(m.grep ? ['-t', m.grep] : []),
    ...files,
  ];
  return new Promise((resolve) => {
    let stderr = '';
    child = spawn(process.execPath, args, { cwd: ROOT, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.on('data', (d) => (stderr = (stderr + d.toString()).slice(-20000)));
    // A test the mutation made wait forever: the run is an error (said as such), not a hang of the whole table.
    const started = child;
    const limit = setTimeout(() => {
      stderr += `\nno verdict after ${RUN_LIMIT_S} s: killed`;
      if (started.pid) process.kill(-started.pid, 'SIGKILL');
    }, RUN_LIMIT_S * 1000);
    child.on('close', () => {
      clearTimeout(limit);
      child = undefined;
      /** @type {any} */
      let result;
      try {
        result = JSON.parse(fs.readFileSync(out, 'utf8'));
      } catch {
        resolve({ failed: [], ran: 0, error: `jest wrote no result: ${stderr.split('\n').slice(-5).join(' ')}` });
        return;
      }
      fs.rmSync(out, { force: true });
      const failed = [];
      let error = '';
      for (const suite of result.testResults ?? []) {
        if (suite.status === 'failed' && (suite.assertionResults ?? []).length === 0)
          error ||= `${path.relative(ROOT, suite.name)}: ${
            String(suite.message)
              .split('\n')
              .find((l) => l.trim()) ?? ''
          }`;
        for (const a of suite.assertionResults ?? [])
          if (a.status === 'failed') failed.push(`${path.relative(ROOT, suite.name)}: ${a.fullName}`);
      }
      resolve({ failed, ran: result.numTotalTests - result.numPendingTests, error });
    });
  });
}

/**
 * dist/ rebuilt while the mutation was in place (with --dist or an entry's `dist: true`, or src changed meanwhile and
 * jest's global setup rebuilt it): the
 * restored file is marked newer than that build and dist/ rebuilt now, so no later test runs the mutated code.
 * @param {string} file @param {number} since
 */
function rebuildIfMutated(file, since) {
  const stamp = path.join(ROOT, 'dist', '.build-stamp');
  if (!fs.existsSync(stamp) || fs.statSync(stamp).mtimeMs < since) return;
  const now = new Date();
  fs.utimesSync(file, now, now);
  ensureDist();
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  restoreLeftover();
  const chosen = MUTATIONS.filter((m) => selected(m.id, opts.only));
  if (opts.list) {
    for (const m of chosen) process.stdout.write(`${m.id}\t${m.file}\t${m.rule}\n\t${m.tests.join(' ')}\n`);
    return;
  }
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  // dist/ current before the first mutation: a stale one would be rebuilt by jest's global setup during a run,
  // with the mutation in it, and kept afterwards (the restored file keeps its time, so nothing says it is stale).
  if (!opts.dist) ensureDist();
  const results = [];
  for (const m of chosen) {
    const file = path.join(ROOT, m.file);
    const started = Date.now();
    const text = fs.readFileSync(file, 'utf8');
    const at = text.indexOf(m.from);
    /** @type {{ id: string, verdict: string, seconds: number, failed: string[], ran: number, note: string }} */
    let r;
    if (at < 0 || text.indexOf(m.from, at + 1) >= 0) {
      // The code changed since the table was written: the mutation must be rewritten, not silently skipped.
      r = {
        id: m.id,
        verdict: 'stale',
        seconds: 0,
        failed: [],
        ran: 0,
        note: at < 0 ? 'text not found' : 'text not unique',
      };
    } else {
      const st = fs.statSync(file);
      current = { file, text, atime: st.atimeMs, mtime: st.mtimeMs };
      fs.writeFileSync(RESTORE, JSON.stringify(current));
      try {
        fs.writeFileSync(file, text.slice(0, at) + m.to + text.slice(at + m.from.length));
        const dist = opts.dist || m.dist === true;
        if (!dist) fs.utimesSync(file, st.atimeMs / 1000, st.mtimeMs / 1000);
        const t = await runTests(m);
        const verdict = t.error ? 'error' : t.failed.length > 0 ? 'caught' : 'SURVIVED';
        r = { id: m.id, verdict, seconds: 0, failed: t.failed, ran: t.ran, note: t.error };
      } finally {
        restore(current);
        current = undefined;
        rebuildIfMutated(file, started);
      }
    }
    r.seconds = Math.round((Date.now() - started) / 100) / 10;
    results.push(r);
    process.stdout.write(
      `${r.verdict.padEnd(8)} ${m.id.padEnd(34)} ${String(r.seconds).padStart(6)} s  ${r.ran} test(s)` +
        `${r.note ? `  (${r.note})` : ''}\n${r.failed
          .slice(0, 3)
          .map((f) => `           ${f}\n`)
          .join('')}`,
    );
  }
  const count = (v) => results.filter((r) => r.verdict === v).length;
  process.stdout.write(
    `\n${results.length} mutation(s): ${count('caught')} caught, ${count('SURVIVED')} survived` +
      `${count('stale') ? `, ${count('stale')} stale` : ''}${count('error') ? `, ${count('error')} error` : ''}\n`,
  );
  for (const r of results.filter((x) => x.verdict !== 'caught')) process.stdout.write(`  ${r.verdict}: ${r.id}\n`);
  if (opts.json) fs.writeFileSync(opts.json, JSON.stringify(results, null, 2) + '\n');
}

main().catch((e) => {
  if (current) restore(current);
  process.stderr.write(`mutate: ${e.stack ?? e}\n`);
  process.exit(1);
});

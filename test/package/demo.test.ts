/**
 * `npm run demo` (scripts/demo.js) is the quick start: the packaged executable against the simulator, every scene
 * with the outcome it expects. It exits 1 when a step misbehaves; this runs it whole, so a change that breaks a
 * scene (as the HCS hot attach and short names once did, unnoticed) fails the suite.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { ensureLinuxPackage, ROOT } from './helpers';

/** tsc's outputs under dist/<area>/ (not the packager's files in dist/ itself), with their modification times. */
function compiledModules(): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (dir: string): void => {
    for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, d.name);
      if (d.isDirectory()) walk(p);
      else if (p.endsWith('.js') && path.dirname(p) !== path.join(ROOT, 'dist')) out.set(p, fs.statSync(p).mtimeMs);
    }
  };
  walk(path.join(ROOT, 'dist'));
  return out;
}

it('npm run demo: every step as expected, without rewriting a dist/ module that other tests are running', () => {
  ensureLinuxPackage();
  // The global setup built dist/; a demo that rebuilt it anyway rewrote modules under processes other workers were
  // starting (CI saw `hcn-cni serve` read an empty hcn-error.js).
  const before = compiledModules();
  expect(before.size).toBeGreaterThan(50);
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'demo.js')], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: 240_000,
  });
  const out = `${r.stdout}${r.stderr}`;
  expect(out).not.toMatch(/^\s*FAIL /m);
  expect(out).toMatch(/all \d+ steps as expected/);
  expect(r.status).toBe(0);
  const rewritten = [...compiledModules()].filter(([f, t]) => before.get(f) !== t).map(([f]) => path.relative(ROOT, f));
  expect(rewritten).toEqual([]);
}, 300_000);

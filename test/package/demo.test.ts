/**
 * `npm run demo` (scripts/demo.js) is the quick start: the packaged executable against the simulator, every scene
 * with the outcome it expects. It exits 1 when a step misbehaves; this runs it whole, so a change that breaks a
 * scene (as the HCS hot attach and short names once did, unnoticed) fails the suite.
 */
import { spawnSync } from 'child_process';
import * as path from 'path';
import { ensureLinuxPackage, ROOT } from './helpers';

it('npm run demo: every step as expected', () => {
  ensureLinuxPackage();
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
}, 300_000);

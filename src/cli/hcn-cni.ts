#!/usr/bin/env node
/**
 * The hcn-cni executable. With CNI_COMMAND set it is the CNI plugin: env + stdin in, the result (or error) JSON on
 * stdout, nothing else there. Without it, it is the operator's tool (src/cli/operator.ts), or with `serve` the
 * resident service behind the native shim (src/cli/serve.ts). This is the only module that
 * touches process.env, stdin, stdout and exit.
 */
import * as fs from 'fs';
import type { CrashHook } from '../state/atomic';
import { isProgramCommand, PROGRAM_COMMANDS, type ProgramCommand } from './program-commands';

declare const __HCN_TEST_HOOKS__: boolean | undefined;
/** Set only in the packaged executable's main script (scripts/package.js): the SEA asset holding the whole program. */
declare const __HCN_WHOLE_PROGRAM_ASSET__: string | undefined;

/** CNI stdin is a small JSON document; read one byte past the limit so the dispatcher can refuse an oversized one. */
const STDIN_LIMIT = 1024 * 1024;

/**
 * Reads stdin to its end (or one byte past the limit). A runtime may hand over a non-blocking stdin, where a read
 * with nothing yet to read fails with EAGAIN at once: then the thread sleeps (1 ms, doubling to 50 ms) before the
 * next try instead of spinning a core at 100 % while the writer takes its time. Node offers no poll() on fd 0
 * without loading node:net, which every start would pay for.
 */
function readStdin(): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  const buf = Buffer.alloc(64 * 1024);
  const nap = new Int32Array(new SharedArrayBuffer(4));
  let wait = 1;
  for (;;) {
    let n: number;
    try {
      n = fs.readSync(0, buf, 0, buf.length, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        Atomics.wait(nap, 0, 0, wait);
        wait = Math.min(wait * 2, 50);
        continue;
      }
      if (code === 'EOF' || code === 'EBADF') break;
      throw e;
    }
    if (n === 0) break;
    wait = 1;
    chunks.push(Buffer.from(buf.subarray(0, n)));
    total += n;
    if (total > STDIN_LIMIT) break;
  }
  return Buffer.concat(chunks);
}

/**
 * Test builds (the unbundled dist/) can kill themselves at named state-write points, for the crash-point matrix.
 * The packaged executables are built with __HCN_TEST_HOOKS__ = false, which removes this entirely.
 */
function testBuild(): boolean {
  return typeof __HCN_TEST_HOOKS__ === 'undefined' ? true : __HCN_TEST_HOOKS__;
}

function crashHook(): CrashHook | undefined {
  const spec = testBuild() ? process.env.HCN_CNI_TEST_CRASH_AT : undefined;
  if (!spec) return undefined;
  const points = new Set(spec.split(','));
  return (point) => {
    if (points.has(point)) process.kill(process.pid, 'SIGKILL');
  };
}

/**
 * Where the addon and the HCN library come from. Only a test build (the unbundled dist/) lets the environment name
 * them: the packaged executables load code only from their fixed places (src/hns/native.ts), as they ignore
 * HCN_CNI_TEST_CRASH_AT — the runtime's environment must not be a way to run a library as the CNI plugin.
 */
function loadOptions(): { addonPath?: string; libraryPath?: string } {
  const o: { addonPath?: string; libraryPath?: string } = {};
  if (!testBuild()) return o;
  if (process.env.HCN_CNI_ADDON) o.addonPath = process.env.HCN_CNI_ADDON;
  if (process.env.HCN_CNI_HCN_LIBRARY) o.libraryPath = process.env.HCN_CNI_HCN_LIBRARY;
  return o;
}

/**
 * VERSION on the shortest path: only the protocol layer, no plugin, no addon, no logger unless it fails. Runtimes
 * may ask before every ADD; it should cost no more than starting Node.
 */
async function version(): Promise<number> {
  const { dispatch } = await import('../cni/dispatch');
  const never = (): never => {
    throw new Error('VERSION does not reach the plugin');
  };
  const { stdout, exitCode } = await dispatch(
    { env: process.env, stdin: readStdin() },
    {
      handlers: { add: never, del: never, check: never, gc: never, status: never },
      platform: process.platform,
      defaults: { stateDir: '' },
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded synchronously on demand: start-up pays only for what is used
      createLogger: (o) => (require('../log/logger') as typeof import('../log/logger')).createLogger(o),
    },
  );
  fs.writeSync(1, stdout.endsWith('\n') ? stdout : `${stdout}\n`);
  return exitCode;
}

async function cni(): Promise<number> {
  const { runCni } = await import('../run');
  const crash = crashHook();
  const { stdout, exitCode } = await runCni({
    env: process.env,
    stdin: readStdin(),
    load: loadOptions(),
    ...(crash ? { crash } : {}),
  });
  // DEL, CHECK, GC and STATUS succeed with no output at all.
  if (stdout) fs.writeSync(1, stdout.endsWith('\n') ? stdout : `${stdout}\n`);
  return exitCode;
}

async function operatorTool(): Promise<number> {
  const { runOps } = await import('./operator');
  return runOps(process.argv.slice(2), {
    env: process.env,
    load: loadOptions(),
    out: (s) => fs.writeSync(1, s),
    err: (s) => fs.writeSync(2, s),
  });
}

/**
 * Exit with the code. Once the addon is loaded, an HCN call HNS never answered may still be running on one of the
 * addon's call threads, inside the HCN library; process.exit() would run the process's exit handlers and static
 * destructors under it (and, when HCN calls ran on libuv's pool, waited for it): the addon's exitNow ends the
 * process at once.
 * Everything — the result on stdout, the logs — has been written synchronously by now.
 */
function exit(code: number): never {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded synchronously on demand: start-up pays only for what is used
  const loaded = (require('../hns/native') as typeof import('../hns/native')).loadedNative();
  if (loaded) loaded.native.exitNow(code);
  process.exit(code);
}

/** `hcn-cni serve`: the resident service behind the shim (src/cli/serve.ts). */
async function serve(): Promise<number> {
  // HCN calls run on the addon's own threads (native/addon/call_threads.h); the pool still does the state's fsyncs,
  // several per verb, and libuv's default of 4 would queue concurrent pods' verbs behind each other's. Read once,
  // when the pool starts (on first use, after this line).
  process.env.UV_THREADPOOL_SIZE ??= '32';
  const { serve: run } = await import('./serve');
  return run(process.argv.slice(3), {
    env: process.env,
    load: loadOptions(),
    err: (s) => fs.writeSync(2, s),
    out: (s) => fs.writeSync(1, s),
  });
}

/**
 * `hcn-cni install`: the node's set-up (src/cli/install.ts), loaded only for this verb so a CNI call's start-up never
 * pays for it. The packaged executable installs itself; a test build must be told what to install.
 */
async function install(): Promise<number> {
  const { runInstall } = await import('./install');
  return runInstall(process.argv.slice(3), {
    env: process.env,
    platform: process.platform,
    ...(testBuild() ? {} : { selfExecutable: process.execPath }),
    out: (s) => fs.writeSync(1, s),
    err: (s) => fs.writeSync(2, s),
  });
}

/** `hcn-cni uninstall` (src/cli/uninstall.ts), loaded only for this verb. */
async function uninstall(): Promise<number> {
  const { runUninstall } = await import('./uninstall');
  return runUninstall(process.argv.slice(3), {
    env: process.env,
    load: loadOptions(),
    platform: process.platform,
    pid: process.pid,
    now: Date.now,
    out: (s) => fs.writeSync(1, s),
    err: (s) => fs.writeSync(2, s),
  });
}

/** `hcn-cni doctor` (src/cli/doctor.ts), loaded only for this verb. */
async function doctor(): Promise<number> {
  const { runDoctor } = await import('./doctor');
  const out = (s: string) => fs.writeSync(1, s);
  return runDoctor(process.argv.slice(3), {
    env: process.env,
    load: loadOptions(),
    out,
    err: (s) => fs.writeSync(2, s),
  });
}

/** `hcn-cni selftest` (src/cli/selftest.ts), loaded only for this verb. */
async function selftest(): Promise<number> {
  const { runSelftestCli } = await import('./selftest');
  const io = { env: process.env, load: loadOptions(), platform: process.platform, pid: process.pid, now: Date.now };
  return runSelftestCli(process.argv.slice(3), {
    ...io,
    out: (s) => fs.writeSync(1, s),
    err: (s) => fs.writeSync(2, s),
  });
}

/**
 * The packaged executable's main script leaves out the program commands (PROGRAM_COMMANDS: the service, the
 * installer, the doctor and its zip library, TOML: about a third of the program), so that the start of every CNI verb
 * reads and compiles only what a verb or the operator's tool may need: they run once per node or by hand, a verb once
 * per pod. For them it runs the whole program, an asset of the same executable, in its place, having set up nothing
 * of its own; the whole program ends the process. scripts/package.js (wholeProgramOnlyPlugin) leaves out their modules.
 */
const WHOLE_PROGRAM_COMMANDS: ReadonlySet<string | undefined> = new Set<string>(PROGRAM_COMMANDS);

function wholeProgramAsset(): string | undefined {
  return typeof __HCN_WHOLE_PROGRAM_ASSET__ === 'string' &&
    !process.env.CNI_COMMAND &&
    WHOLE_PROGRAM_COMMANDS.has(process.argv[2])
    ? __HCN_WHOLE_PROGRAM_ASSET__
    : undefined;
}

function runWholeProgram(asset: string): void {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded synchronously on demand: start-up pays only for what is used */
  const { getAsset } = require('node:sea') as { getAsset(name: string, encoding: 'utf8'): string };
  const { runInThisContext } = require('node:vm') as typeof import('vm');
  const { wrap } = require('node:module') as { wrap(code: string): string };
  /* eslint-enable @typescript-eslint/no-require-imports */
  // As the executable would run it as its main script: a CommonJS body given the embedder's require (built-ins only).
  const main = runInThisContext(wrap(getAsset(asset, 'utf8')), { filename: asset }) as (...args: unknown[]) => void;
  main({}, require, { exports: {} }, asset, '.');
}

/**
 * Every command that is not the operator's tool, by name: the one dispatch table (typed by PROGRAM_COMMANDS, whose
 * every entry `hcn-cni help` must list: test/cli/help.test.ts). A command of its own goes here, never into a
 * comparison of argv of its own.
 */
const PROGRAMS: Record<ProgramCommand, () => Promise<number>> = { serve, install, uninstall, doctor, selftest };

function command(): Promise<number> {
  if (process.env.CNI_COMMAND === 'VERSION') return version();
  if (process.env.CNI_COMMAND) return cni();
  const word = process.argv[2];
  return isProgramCommand(word) ? PROGRAMS[word]() : operatorTool();
}

const whole = wholeProgramAsset();
if (whole) runWholeProgram(whole);
else
  command()
    .then((code) => exit(code))
    .catch((e: unknown) => {
      fs.writeSync(2, `hcn-cni: ${(e as Error)?.stack ?? e}\n`);
      exit(1);
    });

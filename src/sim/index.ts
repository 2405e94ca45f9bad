/**
 * hcn-cni/sim: the HNS simulator as a library. startSimulator() spawns the service as its own process — as HNS is
 * one — so a client killed mid-call leaves its call running, exactly the seed-000 situation.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SimControl, SimHost } from './control-types';
import { connectControl } from './control-client';
import { findPackageRoot } from './package-root';

export * from './control-types';
export { connectControl, ControlClient } from './control-client';
export { WireClient, type WireClientOptions, type OpRequest, type OpResponse } from './wire-client';
export { parseAddress, formatAddress } from './address';

export interface StartSimulatorOptions {
  /** `unix:/path.sock` or `tcp:127.0.0.1:PORT` (0 picks a port). Default: a unix socket in a fresh temp dir. */
  listen?: string;
  /** Overrides of the default simulated host (adapters, version, latencies…). */
  host?: Partial<SimHost>;
  /** Keeps persistent networks across simulator processes (`--state FILE`). */
  stateFile?: string;
  /** Environment of the simulator process (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** pino level of the simulator's stderr log. Default: info. */
  logLevel?: string;
  /** Append the simulator's stderr log to this file. Default: kept in memory and shown if start-up fails. */
  logFile?: string;
  /** How long to wait for the "listening" line. Default 15 s. */
  startTimeoutMs?: number;
}

export interface RunningSimulator {
  /** The HCN_SIM value for clients. */
  address: string;
  pid: number;
  control: SimControl;
  /** Stops the simulator process (shutdown, then SIGTERM, then SIGKILL) and removes its temp dir. */
  stop(): Promise<void>;
}

/** The compiled CLI: next to this module in dist/, or under the package's dist/ when running from sources. */
export function simulatorCliPath(): string {
  const beside = path.join(__dirname, '../cli/hcn-sim.js');
  if (fs.existsSync(beside)) return beside;
  const built = path.join(findPackageRoot(__dirname), 'dist/cli/hcn-sim.js');
  if (fs.existsSync(built)) return built;
  throw new Error(`hcn-sim is not built (looked for ${beside} and ${built}); run npm run build:ts`);
}

export async function startSimulator(options: StartSimulatorOptions = {}): Promise<RunningSimulator> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-sim-'));
  const listen = options.listen ?? `unix:${path.join(tmp, 'hns.sock')}`;
  const args = [
    simulatorCliPath(),
    'serve',
    '--listen',
    listen,
    '--log-level',
    options.logLevel ?? 'info',
    '--exit-with-stdin',
  ];
  if (options.stateFile) args.push('--state', options.stateFile);
  if (options.host) {
    const hostFile = path.join(tmp, 'host.json');
    fs.writeFileSync(hostFile, JSON.stringify(options.host));
    args.push('--host', hostFile);
  }
  const logFd = options.logFile ? fs.openSync(options.logFile, 'a') : undefined;
  const child = spawn(process.execPath, args, {
    env: options.env,
    stdio: ['pipe', 'pipe', logFd ?? 'pipe'],
  });
  if (logFd !== undefined) fs.closeSync(logFd);
  let stderrTail = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderrTail = (stderrTail + d.toString('utf8')).slice(-16_384);
  });
  // The simulator exits when this pipe closes, i.e. when we do: no orphaned simulators after a crashed test run.
  child.stdin?.on('error', () => undefined);

  let ready: { listening: string; pid: number };
  try {
    ready = await readyLine(child, options.startTimeoutMs ?? 15_000, () => stderrTail);
  } catch (e) {
    child.kill('SIGKILL');
    fs.rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  const control = connectControl(ready.listening);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      const alive = () => child.exitCode === null && child.signalCode === null;
      if (alive()) await control.shutdown().catch(() => undefined);
      if (!(await within(exited, 5000)) && alive()) {
        child.kill('SIGTERM');
        if (!(await within(exited, 2000))) child.kill('SIGKILL');
      }
      await exited;
      child.stdin?.destroy();
      fs.rmSync(tmp, { recursive: true, force: true });
    })());
  return { address: ready.listening, pid: ready.pid, control, stop };
}

function within(p: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    void p.then(() => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/** The one JSON line `hcn-sim serve` prints on stdout when it listens. */
function readyLine(
  child: ChildProcess,
  timeoutMs: number,
  stderr: () => string,
): Promise<{ listening: string; pid: number }> {
  return new Promise((resolve, reject) => {
    let out = '';
    const fail = (why: string) => {
      cleanup();
      const tail = stderr().trim();
      reject(new Error(`hcn-sim did not start: ${why}${tail ? `\n${tail}` : ''}`));
    };
    const onData = (d: Buffer) => {
      out += d.toString('utf8');
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      try {
        const line = JSON.parse(out.slice(0, nl)) as { listening?: string; pid?: number };
        if (typeof line.listening !== 'string' || typeof line.pid !== 'number')
          return fail(`unexpected output ${out.slice(0, nl)}`);
        cleanup();
        resolve({ listening: line.listening, pid: line.pid });
      } catch {
        fail(`unexpected output ${out.slice(0, nl)}`);
      }
    };
    const onExit = (code: number | null, signal: string | null) => fail(`exited with ${signal ?? code}`);
    const t = setTimeout(() => fail(`no listening line within ${timeoutMs} ms`), timeoutMs);
    function cleanup() {
      clearTimeout(t);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
    }
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}

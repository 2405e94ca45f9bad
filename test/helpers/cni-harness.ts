/**
 * Drives the plugin the way a runtime does — in process through runCni, or as a child process through the real CLI
 * entry — against a simulator started for the test file. Every test gets its own state directory.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { silentLogger } from '../../src/log/logger';
import { runCni } from '../../src/run';
import { pluginDeps, type PluginDeps } from '../../src/plugin/deps';
import { ServedConfigs } from '../../src/service/served-configs';
import { startSimulator, type RunningSimulator, type SimHost } from '../../src/sim';

export const ROOT = path.join(__dirname, '..', '..');
export const CLI = path.join(ROOT, 'dist', 'cli', 'hcn-cni.js');
export const CNI_BIN = '/usr/lib/cni';

export interface Harness {
  sim: RunningSimulator;
  tmp: string;
  stateDir: string;
  /** The plugin's dependencies for the in-process calls of this harness (the addon is loaded once per process anyway). */
  deps: PluginDeps;
  /** The configurations the in-process verbs ran with, as the resident service keeps them (served-configs.ts). */
  served: ServedConfigs;
  /** Empties the simulator (objects, faults) and the state directory: a fresh node for the next test. */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(host?: Partial<SimHost>): Promise<Harness> {
  const sim = await startSimulator({ logLevel: 'warn', ...(host ? { host } : {}) });
  // The simulator client library inside the addon reads HCN_SIM from this process's environment on every call.
  process.env.HCN_SIM = sim.address;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-cni-test-'));
  const stateDir = path.join(tmp, 'state');
  const h: Harness = {
    sim,
    tmp,
    stateDir,
    // One node = one simulator: its node-wide claims register lives in the harness's temp dir.
    deps: pluginDeps({ pid: process.pid, claimsDir: path.join(tmp, 'claims') }),
    served: new ServedConfigs(),
    async reset() {
      await sim.control.reset();
      for (const e of fs.readdirSync(tmp)) fs.rmSync(path.join(tmp, e), { recursive: true, force: true });
      // The API choice is cached per runtime (it is a property of the host, and tests change the host).
      h.deps = pluginDeps({ pid: process.pid, claimsDir: path.join(tmp, 'claims') });
      h.served = new ServedConfigs();
    },
    async stop() {
      await sim.stop();
      removeTempDir(tmp);
    },
  };
  return h;
}

/**
 * Removes a test's temporary directory and the service address locks made beside it: a service listening in the
 * directory keeps its lock in the parent, `<dir>.<socket>.lock` (src/service/transport/listeners.ts addressLockFile),
 * which every run would otherwise leave in the machine's temporary directory.
 */
export function removeTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  const prefix = `${path.basename(dir)}.`;
  for (const f of fs.readdirSync(path.dirname(dir)))
    if (f.startsWith(prefix) && f.endsWith('.lock')) fs.rmSync(path.join(path.dirname(dir), f), { force: true });
}

/**
 * One simulator (and temp dir) for the test file and a fresh node before each test — the usual set-up in one call;
 * `bind` receives the harness once beforeAll has started it.
 */
export function useHarness(host: Partial<SimHost> | undefined, bind: (h: Harness) => void): void {
  let h: Harness | undefined;
  beforeAll(async () => {
    h = await startHarness(host);
    bind(h);
  });
  afterAll(async () => {
    await h?.stop();
  });
  beforeEach(async () => {
    await h!.reset();
  });
}

export interface CniCall {
  verb: 'ADD' | 'DEL' | 'CHECK' | 'VERSION' | 'GC' | 'STATUS';
  conf: Record<string, unknown>;
  containerId?: string;
  ifname?: string;
  netns?: string | undefined;
  args?: string;
  path?: string;
  env?: Record<string, string | undefined>;
  /**
   * Docker-style ADD (netns "none" or empty): the runtime has started the sandbox container before it calls CNI, so
   * the harness starts it in the simulator's HCS (`ctl container add`) unless this is false (a container that is gone).
   */
  startContainer?: boolean;
}

/** What a Docker runtime does before the sandbox ADD: the compute system exists (idempotent). */
export async function startSandboxContainer(h: Harness, c: CniCall): Promise<void> {
  const netns = 'netns' in c ? (c.netns ?? '') : 'guid';
  if (c.verb !== 'ADD' || c.startContainer === false || !(netns.trim() === '' || netns.trim().toLowerCase() === 'none'))
    return;
  const id = c.containerId ?? 'ctr1';
  await h.sim.control.addContainer(id).catch((e: Error) => {
    if (!/exists/.test(e.message)) throw e;
  });
}

export interface CniOutcome {
  exitCode: number;
  stdout: string;
  json: Record<string, unknown> | undefined;
}

export function cniEnv(h: Harness, c: CniCall): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {
    CNI_COMMAND: c.verb,
    CNI_PATH: c.path ?? CNI_BIN,
    HCN_SIM: h.sim.address,
    HCN_CNI_CLAIMS_DIR: path.join(h.tmp, 'claims'),
  };
  if (c.verb !== 'VERSION' && c.verb !== 'GC' && c.verb !== 'STATUS') {
    env.CNI_CONTAINERID = c.containerId ?? 'ctr1';
    env.CNI_IFNAME = c.ifname ?? 'eth0';
    if ('netns' in c) {
      if (c.netns !== undefined) env.CNI_NETNS = c.netns;
    } else env.CNI_NETNS = '5f0e7a3c-1b2d-4c5e-8f90-123456789abc';
  }
  if (c.args) env.CNI_ARGS = c.args;
  return { ...env, ...c.env };
}

function parse(stdout: string): Record<string, unknown> | undefined {
  try {
    return stdout.trim() ? (JSON.parse(stdout) as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** In process, through runCni (the same dispatcher and plugin the executable runs). */
export async function cni(h: Harness, c: CniCall): Promise<CniOutcome> {
  await startSandboxContainer(h, c);
  const { stdout, exitCode } = await runCni({
    env: cniEnv(h, c),
    stdin: JSON.stringify({ stateDir: h.stateDir, ...c.conf }),
    deps: h.deps,
    onServed: h.served.served,
    createLogger: () => silentLogger,
  });
  return { exitCode, stdout, json: parse(stdout) };
}

/** As a separate process through the real CLI entry (dist/cli/hcn-cni.js). */
export interface ProcessOutcome extends CniOutcome {
  stderr: string;
  signal: NodeJS.Signals | null;
  pid: number;
}

export async function cniProcess(
  h: Harness,
  c: CniCall,
  extraEnv: Record<string, string> = {},
): Promise<ProcessOutcome> {
  await startSandboxContainer(h, c);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI], {
      env: { PATH: process.env.PATH, ...cniEnv(h, c), ...extraEnv } as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({ exitCode: code ?? -1, signal, stdout, stderr, json: parse(stdout), pid: child.pid ?? -1 }),
    );
    child.stdin.end(JSON.stringify({ stateDir: h.stateDir, logLevel: 'debug', ...c.conf }));
  });
}

/** Files under the state directory, relative, sorted (to assert "state unchanged"). */
export function stateFiles(h: Pick<Harness, 'stateDir'>): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    if (!fs.existsSync(d)) return;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      // The lock, the stamp of the last whole-node audit (StateStore.markAudited) and the note of failed
      // housekeeping (src/state/housekeeping.ts), and the node agent's note of the networks' adapters
      // (src/state/adapters-seen.ts) are not records.
      else if (!['lock', 'audited', 'housekeeping.json', 'adapters-seen.json'].includes(e.name))
        out.push(path.relative(h.stateDir, p));
    }
  };
  walk(h.stateDir);
  return out.sort();
}

/** Seed 000's configuration: delegated-NIC mode on the NIC with this MAC (00-15-5D-… or 00:15:5d:…), subnet 10.10.3.0/24. */
export function delegatedNicConf(nicMac: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cniVersion: '1.1.0',
    name: 'delegated',
    type: 'hcn-cni',
    mode: 'delegatedNic',
    subnet: '10.10.3.0/24',
    runtimeConfig: { mac: nicMac.toLowerCase().replace(/-/g, ':') },
    ...extra,
  };
}

export function bridgeConf(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cniVersion: '1.0.0',
    name: 'cbr0',
    type: 'hcn-cni',
    createNetwork: true,
    subnet: '10.244.1.0/24',
    ...extra,
  };
}

/**
 * The service-mode set-up for the suites in this directory: a CNI bin directory holding the native shim as
 * `hcn-cni` and, beside it, `hcn-cni-standalone` (a wrapper that runs dist/cli/hcn-cni.js and records that it ran),
 * and `hcn-cni serve` as a child process on a private unix socket. Not a test file itself.
 */
import { spawn, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { silentLogger } from '../../src/log/logger';
import { queryStatus } from '../../src/service/transport/client';
import { startService, type Service, type ServiceOptions, type ServiceStatus } from '../../src/service/service';
import { bridgeConf, CLI, cniEnv, ROOT, type CniCall, type Harness, type ProcessOutcome } from '../helpers/cni-harness';
import { hungOn, newNamespace, recordFiles, until } from '../plugin/support';

/** The HNS call that creates a pod's endpoint on an HCN host, in every mode (src/hns/api.ts V2Api createEndpoint). */
export const SERVICE_CREATE_OP = 'HcnCreateEndpoint';

/**
 * The HCN calls of an ADD through the service with the network there (its handle kept since an earlier ADD) and an
 * HCN namespace (docs/hns-round-trips.md says what each is for): the leftovers of a killed attempt, the create on the
 * kept network handle and the endpoint's properties, the attach (whose namespace handle is kept until the DEL).
 */
export const SERVICE_ADD_OPS = [
  'HcnEnumerateEndpoints',
  'HcnCreateEndpoint',
  'HcnQueryEndpointProperties',
  'HcnOpenNamespace',
  'HcnModifyNamespace',
];

/**
 * The HCN calls of a DEL through the service that attached the pod, once it has a listing of its own: the detach on
 * the namespace handle kept since the ADD, the delete.
 */
export const SERVICE_DEL_OPS = ['HcnModifyNamespace', 'HcnDeleteEndpoint'];

export const SHIM = path.join(ROOT, 'build', 'Release', 'hcn-cni-shim');

export interface Bin {
  dir: string;
  shim: string;
  /** One line per run of the standalone executable (the fallback path). */
  standaloneRuns(): number;
}

/**
 * Writes `file` as the standalone executable the shim falls back to: dist/cli/hcn-cni.js, with a line appended to
 * `runs` each time it runs (`note`, a comment, makes two such files differ). How many runs: runsIn(runs).
 */
export function writeStandalone(file: string, runs: string, note = ''): void {
  fs.writeFileSync(file, `#!/bin/sh\n# ${note}\necho run >> '${runs}'\nexec '${process.execPath}' '${CLI}' "$@"\n`, {
    mode: 0o755,
  });
}

export function runsIn(runs: string): number {
  return fs.existsSync(runs) ? fs.readFileSync(runs, 'utf8').split('\n').filter(Boolean).length : 0;
}

export function makeBin(h: Harness, name = 'bin'): Bin {
  const dir = path.join(h.tmp, name);
  fs.mkdirSync(dir, { recursive: true });
  const shim = path.join(dir, 'hcn-cni');
  fs.copyFileSync(SHIM, shim);
  fs.chmodSync(shim, 0o755);
  const runs = path.join(dir, 'standalone.runs');
  writeStandalone(path.join(dir, 'hcn-cni-standalone'), runs);
  return { dir, shim, standaloneRuns: () => runsIn(runs) };
}

export interface InProcessServices {
  /** The running test's bin directory (makeBin), made before each test. */
  readonly bin: Bin;
  /**
   * Starts the running test's service in this process (closed after the test): on <tmp>/run/service.sock, its
   * claims in <tmp>/claims, silent, as this process; `options` add to that or replace it.
   */
  start(options?: Partial<ServiceOptions>): Promise<Service>;
}

/** A suite's in-process services, one per test, and their bin directories; call it once per file, after useHarness. */
export function inProcessServices(harness: () => Harness): InProcessServices {
  let bin: Bin | undefined;
  let service: Service | undefined;
  beforeEach(() => {
    bin = makeBin(harness());
  });
  afterEach(async () => {
    await service?.close();
    service = undefined;
  });
  return {
    get bin() {
      return bin!;
    },
    async start(options = {}) {
      const h = harness();
      service = await startService({
        address: path.join(h.tmp, 'run', 'service.sock'),
        platform: 'linux',
        pid: process.pid,
        log: silentLogger,
        claimsDir: path.join(h.tmp, 'claims'),
        ...options,
      });
      return service;
    },
  };
}

export interface RunningService {
  address: string;
  child: ChildProcess;
  stderr(): string;
  status(): Promise<ServiceStatus>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
  kill(): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function startServiceProcess(
  h: Harness,
  address = path.join(h.tmp, 'run', 'service.sock'),
  args: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<RunningService> {
  const child = spawn(process.execPath, [CLI, 'serve', '--listen', address, ...args], {
    env: { PATH: process.env.PATH, HCN_SIM: h.sim.address, ...env } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  await until(
    async () => {
      if (child.exitCode !== null) throw new Error(`hcn-cni serve exited: ${stderr}`);
      return queryStatus(address).catch(() => undefined);
    },
    20_000,
    'the service to listen',
  );
  return {
    address,
    child,
    stderr: () => stderr,
    status: () => queryStatus(address),
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

export interface ShimRun extends ProcessOutcome {
  child: ChildProcess;
}

/** Runs the shim as the runtime would: CNI env + HCN_CNI_SERVICE, the configuration on stdin. */
export function startShim(
  h: Harness,
  bin: Bin,
  address: string,
  c: CniCall,
  stdin?: string | Buffer,
): { child: ChildProcess; done: Promise<ProcessOutcome> } {
  const child = spawn(bin.shim, [], {
    env: { PATH: process.env.PATH, ...cniEnv(h, c), HCN_CNI_SERVICE: address } as NodeJS.ProcessEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin!.on('error', () => undefined);
  child.stdin!.end(stdin ?? JSON.stringify({ stateDir: h.stateDir, logLevel: 'debug', ...c.conf }));
  const done = new Promise<ProcessOutcome>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      let json: Record<string, unknown> | undefined;
      try {
        json = stdout.trim() ? (JSON.parse(stdout) as Record<string, unknown>) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ exitCode: code ?? -1, signal, stdout, stderr, json, pid: child.pid ?? -1 });
    });
  });
  return { child, done };
}

export function viaShim(
  h: Harness,
  bin: Bin,
  address: string,
  c: CniCall,
  stdin?: string | Buffer,
): Promise<ProcessOutcome> {
  return startShim(h, bin, address, c, stdin).done;
}

/**
 * A bridge ADD of `containerId` through the shim, caught in the middle of its work: HNS holds its endpoint create
 * (a hang) until the test calls `h.sim.control.release()`.
 */
export async function startHungAdd(
  h: Harness,
  bin: Bin,
  address: string,
  containerId: string,
  netns: string,
): Promise<{ child: ChildProcess; done: Promise<ProcessOutcome> }> {
  await h.sim.control.hang(SERVICE_CREATE_OP);
  const run = startShim(h, bin, address, { verb: 'ADD', conf: bridgeConf(), containerId, netns });
  await hungOn(h.sim.control, SERVICE_CREATE_OP);
  return run;
}

/** One verb a lane ran through the shim, and how it ended. */
export interface LaneOutcome {
  what: string;
  out: ProcessOutcome;
}

/**
 * Pods coming and going through the shim while a test changes something under them: `lanes` pods at a time, each
 * lane one pod after another, each pod's ADD then its DEL, until stop() (which waits for the verbs in flight). Start
 * it in a try block and stop it in the finally: a lane left running would start verbs against a torn-down harness.
 */
export function adDelLanes(
  h: Harness,
  bin: Bin,
  address: string,
  lanes = 2,
): { outcomes: LaneOutcome[]; stop(): Promise<void> } {
  const outcomes: LaneOutcome[] = [];
  let stopped = false;
  const lane = async (n: number): Promise<void> => {
    for (let i = 0; !stopped; i++) {
      const containerId = `pod-${n}-${i}`;
      const netns = await newNamespace(h);
      for (const verb of ['ADD', 'DEL'] as const) {
        const out = await viaShim(h, bin, address, { verb, conf: bridgeConf(), containerId, netns });
        outcomes.push({ what: `${verb} ${containerId}`, out });
      }
    }
  };
  const running = Array.from({ length: lanes }, (_, n) => lane(n));
  return {
    outcomes,
    stop: async () => {
      stopped = true;
      await Promise.allSettled(running);
    },
  };
}

/** After every pod's DEL: no endpoint in HNS, and no record, intent or tombstone in the state. */
export async function expectNothingLeft(h: Harness): Promise<void> {
  expect((await h.sim.control.dump()).endpoints).toEqual([]);
  for (const kind of ['attachments', 'intents', 'tombstones'] as const) expect(recordFiles(h, kind)).toEqual([]);
}

/**
 * Waits until the node agent has finished a visit with an audit in it (past the `after`th audit): the audit, then the
 * health check of the networks it serves (node-agent.ts visit). Not `agent.audits > after` alone: that count rises
 * as the audit ends, before the health check lists the endpoints, and a test that went on then found that listing
 * among the calls of the verb it measured (seen with the service slowed for a second after its audit). Returns the
 * audit count.
 */
export async function auditedVisitOver(service: Pick<RunningService, 'status'>, after = 0): Promise<number> {
  return until(
    async () => {
      const { audits, lastAuditAt, health } = (await service.status()).agent;
      // The audited directory is the one a network of was checked since; all of its networks must have been.
      const dir = lastAuditAt === undefined ? undefined : health.find((n) => n.checkedAt >= lastAuditAt)?.stateDir;
      const checkedSince =
        dir !== undefined && health.filter((n) => n.stateDir === dir).every((n) => n.checkedAt >= lastAuditAt!);
      return audits > after && checkedSince ? audits : undefined;
    },
    20_000,
    "the node agent's visit with an audit to end",
  );
}

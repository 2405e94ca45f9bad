/**
 * Test harness for the protocol layer: fake handlers that record what they were given and return canned results,
 * a recording logger, and `invoke`, which runs the dispatcher the way src/cli will (env object + stdin bytes).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { dispatch, type DispatchDeps } from '../../src/cni/dispatch';
import type { IpamOptions } from '../../src/cni/ipam';
import type {
  CniHandlers,
  CniResult,
  ConfContext,
  IpamClient,
  IpamResult,
  LogLevel,
  Logger,
  VerbContext,
} from '../../src/cni/types';

export interface LogRecord {
  level: string;
  obj: Record<string, unknown>;
  msg: string | undefined;
}

/** RecordingLogger: a Logger that keeps every line (with child bindings merged in). */
export class RecordingLogger implements Logger {
  constructor(
    readonly records: LogRecord[] = [],
    private readonly bindings: Record<string, unknown> = {},
  ) {}
  private add(level: string, obj: object, msg?: string): void {
    this.records.push({ level, obj: { ...this.bindings, ...(obj as Record<string, unknown>) }, msg });
  }
  trace(obj: object, msg?: string): void {
    this.add('trace', obj, msg);
  }
  debug(obj: object, msg?: string): void {
    this.add('debug', obj, msg);
  }
  info(obj: object, msg?: string): void {
    this.add('info', obj, msg);
  }
  warn(obj: object, msg?: string): void {
    this.add('warn', obj, msg);
  }
  error(obj: object, msg?: string): void {
    this.add('error', obj, msg);
  }
  child(bindings: Record<string, unknown>): Logger {
    return new RecordingLogger(this.records, { ...this.bindings, ...bindings });
  }
}

/** A result with everything a 1.1.0 result can carry, so each version's pruning is visible. */
export const FULL_RESULT: CniResult = {
  interfaces: [
    {
      name: 'eth0',
      mac: '00:15:5d:aa:bb:cc',
      sandbox: '5f0e7a3c-1b2d-4c5e-8f90-123456789abc',
      mtu: 1450,
      socketPath: '/run/x.sock',
      pciID: '0000:00:1f.6',
    },
  ],
  ips: [
    { address: '10.0.0.5/24', gateway: '10.0.0.1', interface: 0 },
    { address: 'fd00::5/64', gateway: 'fd00::1', interface: 0 },
  ],
  routes: [{ dst: '0.0.0.0/0', gw: '10.0.0.1', mtu: 1400, advmss: 1360, priority: 100, table: 254, scope: 0 }],
  dns: {
    nameservers: ['10.96.0.10'],
    domain: 'cluster.local',
    search: ['default.svc.cluster.local'],
    options: ['ndots:5'],
  },
};

export type Call = { verb: 'ADD' | 'DEL' | 'CHECK'; ctx: VerbContext } | { verb: 'GC' | 'STATUS'; ctx: ConfContext };

/** FakeHandlers: records every call; `fail` makes the next calls throw; `result` is what ADD returns. */
export class FakeHandlers implements CniHandlers {
  calls: Call[] = [];
  result: CniResult = FULL_RESULT;
  fail: unknown = undefined;
  async add(ctx: VerbContext): Promise<CniResult> {
    this.calls.push({ verb: 'ADD', ctx });
    if (this.fail !== undefined) throw this.fail;
    return this.result;
  }
  async del(ctx: VerbContext): Promise<void> {
    this.calls.push({ verb: 'DEL', ctx });
    if (this.fail !== undefined) throw this.fail;
  }
  async check(ctx: VerbContext): Promise<void> {
    this.calls.push({ verb: 'CHECK', ctx });
    if (this.fail !== undefined) throw this.fail;
  }
  async gc(ctx: ConfContext): Promise<void> {
    this.calls.push({ verb: 'GC', ctx });
    if (this.fail !== undefined) throw this.fail;
  }
  async status(ctx: ConfContext): Promise<void> {
    this.calls.push({ verb: 'STATUS', ctx });
    if (this.fail !== undefined) throw this.fail;
  }
}

/** A stand-in IpamClient for dispatcher tests (the real one is tested against real plugins in ipam.test.ts). */
export function fakeIpam(type: string | undefined): IpamClient {
  const no = async (): Promise<never> => {
    throw new Error('fake ipam: not used in this test');
  };
  return {
    configured: type !== undefined,
    type,
    add: no as () => Promise<IpamResult>,
    del: no,
    check: no,
    delFor: no,
    installed: async () => type !== undefined,
    gc: no,
    status: no,
  };
}

export function baseEnv(
  verb: string,
  extra: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  const attachment = ['ADD', 'DEL', 'CHECK'].includes(verb)
    ? { CNI_CONTAINERID: 'ctr-1', CNI_NETNS: '5f0e7a3c-1b2d-4c5e-8f90-123456789abc', CNI_IFNAME: 'eth0' }
    : {};
  return { CNI_COMMAND: verb, ...attachment, CNI_PATH: '/opt/cni/bin:/usr/lib/cni', ...extra };
}

export function baseConf(version: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { cniVersion: version, name: 'cbr0', type: 'hcn-cni', ...extra };
}

export interface Invocation {
  stdout: string;
  exitCode: number;
  /** stdout parsed (undefined when stdout is empty). */
  json: Record<string, unknown> | undefined;
  handlers: FakeHandlers;
  logs: LogRecord[];
  loggerRequests: Array<{ level: LogLevel; file?: string }>;
  ipamRequests: IpamOptions[];
}

export interface InvokeOptions {
  env: Record<string, string | undefined>;
  stdin?: Buffer | string | Record<string, unknown>;
  handlers?: FakeHandlers;
  platform?: NodeJS.Platform;
  deps?: Partial<DispatchDeps>;
}

/** invoke: run the dispatcher with fakes and collect everything observable. */
export async function invoke(opts: InvokeOptions): Promise<Invocation> {
  const handlers = opts.handlers ?? new FakeHandlers();
  const logs: LogRecord[] = [];
  const loggerRequests: Array<{ level: LogLevel; file?: string }> = [];
  const ipamRequests: IpamOptions[] = [];
  const stdin =
    opts.stdin === undefined
      ? Buffer.alloc(0)
      : Buffer.isBuffer(opts.stdin)
        ? opts.stdin
        : Buffer.from(typeof opts.stdin === 'string' ? opts.stdin : JSON.stringify(opts.stdin));
  let t = 1000;
  const deps: DispatchDeps = {
    handlers,
    platform: opts.platform ?? 'linux',
    defaults: { stateDir: '/var/lib/hcn-cni' },
    createLogger: (o) => {
      loggerRequests.push(o);
      return new RecordingLogger(logs);
    },
    now: () => (t += 7),
    ipamFactory: (o) => {
      ipamRequests.push(o);
      return fakeIpam(o.conf.ipam?.type);
    },
    ...opts.deps,
  };
  const out = await dispatch({ env: opts.env, stdin }, deps);
  return {
    ...out,
    json: out.stdout === '' ? undefined : (JSON.parse(out.stdout) as Record<string, unknown>),
    handlers,
    logs,
    loggerRequests,
    ipamRequests,
  };
}

/** tempDir: a fresh directory removed after the test file (jest's afterAll registered by the caller). */
export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `hcn-cni-${prefix}-`));
}

/** writeScript: an executable /bin/sh script. */
export function writeScript(dir: string, name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

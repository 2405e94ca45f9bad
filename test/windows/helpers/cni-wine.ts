/**
 * hcn-cni.exe under wine as a runtime drives it: CNI_* env + the configuration on stdin (files: see wine.ts), the
 * simulator reached over tcp:127.0.0.1. Namespaces are made from this (Linux) process through the Linux addon, on
 * the same simulator.
 */
import { Hcn } from '../../../src/hns/hcn';
import type { RunningSimulator } from '../../../src/sim';
import { runWine, winPath, type WinePrefix, type WineRun, type WineTimings } from './wine';

export interface ExeCall {
  /** The CNI verb; none: the operator's CLI (`hcn-cni.exe version`, …, from args). */
  verb?: 'ADD' | 'DEL' | 'CHECK' | 'VERSION' | 'GC' | 'STATUS';
  conf?: Record<string, unknown>;
  containerId?: string;
  ifname?: string;
  /** Omitted: 'none'. */
  netns?: string;
  args?: string[];
  env?: Record<string, string | undefined>;
  /** Docker-style ADD: start the sandbox container in the simulator's HCS first, as the runtime has (default true). */
  startContainer?: boolean;
}

export interface ExeOutcome extends WineRun {
  json: Record<string, any> | undefined;
}

export class WineCni {
  private hcnInstance: Hcn | undefined;

  constructor(
    readonly prefix: WinePrefix,
    readonly exe: string,
    readonly sim: RunningSimulator,
    readonly stateDir: string,
    readonly timings: WineTimings,
  ) {}

  /** The Linux-side facade over the same simulator (for namespaces and checks). */
  hcn(): Hcn {
    process.env.HCN_SIM = this.sim.address; // the client library reads it on every call
    this.hcnInstance ??= Hcn.open({ timeoutMs: 10_000 });
    return this.hcnInstance;
  }

  async newNamespace(): Promise<string> {
    const ns = await this.hcn().createNamespace({});
    return String(ns.ID).toLowerCase();
  }

  async call(c: ExeCall, label?: string, onSpawn?: (pid: number) => void): Promise<ExeOutcome> {
    const env: Record<string, string | undefined> = { HCN_SIM: this.sim.address };
    if (c.verb) Object.assign(env, { CNI_COMMAND: c.verb, CNI_PATH: 'C:\\opt\\cni\\bin' });
    if (c.verb === 'ADD' || c.verb === 'DEL' || c.verb === 'CHECK') {
      env.CNI_CONTAINERID = c.containerId ?? 'pod';
      env.CNI_IFNAME = c.ifname ?? 'eth0';
      env.CNI_NETNS = c.netns ?? 'none';
    }
    Object.assign(env, c.env);
    const netns = (c.netns ?? 'none').trim().toLowerCase();
    if (c.verb === 'ADD' && c.startContainer !== false && (netns === '' || netns === 'none')) {
      const id = env.CNI_CONTAINERID!;
      await this.sim.control.addContainer(id).catch((e: Error) => {
        if (!/exists/.test(e.message)) throw e;
      });
    }
    const stdin = c.conf ? JSON.stringify({ stateDir: winPath(this.stateDir), logLevel: 'debug', ...c.conf }) : '';
    const run = await runWine(this.prefix, [this.exe, ...(c.args ?? [])], {
      env,
      stdin,
      timeoutMs: 60_000,
      ...(onSpawn ? { onSpawn } : {}),
    });
    this.timings.add(
      label ?? `hcn-cni.exe ${c.verb ?? (c.args ?? []).join(' ')}${c.containerId ? ` ${c.containerId}` : ''}`,
      run.ms,
    );
    let json: Record<string, any> | undefined;
    try {
      json = run.stdout.trim() ? (JSON.parse(run.stdout) as Record<string, any>) : undefined;
    } catch {
      json = undefined;
    }
    return { ...run, json };
  }
}

/** CNI stdout holds exactly one JSON document and a newline, or nothing; logs are JSON lines on stderr. */
export function expectOnlyResult(out: ExeOutcome, nothing = false): void {
  if (nothing) {
    expect(out.stdout).toBe('');
    return;
  }
  expect(out.stdout.endsWith('\n')).toBe(true);
  expect(out.stdout.trimEnd().split('\n')).toHaveLength(1);
  expect(() => JSON.parse(out.stdout) as unknown).not.toThrow();
}

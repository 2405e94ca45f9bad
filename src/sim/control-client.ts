/** SimControl over the wire: each method is one control request line (control-types.ts, SimControlCommands). */
import type {
  FaultOptions,
  RaceMode,
  SimAdapter,
  SimCallRecord,
  SimControl,
  SimControlCommands,
  SimDump,
  SimHost,
  SimOp,
  SimStats,
} from './control-types';
import { requestLine } from './line-client';

type Name = keyof SimControlCommands;

export class ControlClient implements SimControl {
  constructor(readonly address: string) {}

  /** Sends one control command; rejects with the service's message when it answers ok:false. */
  async send<K extends Name>(
    ctl: K,
    args: SimControlCommands[K]['args'] | Record<string, unknown> = {},
  ): Promise<SimControlCommands[K]['result']> {
    const res = (await requestLine(this.address, { v: 1, ctl, args })) as {
      ok?: boolean;
      result?: unknown;
      error?: string;
    };
    if (res.ok !== true) throw new Error(`hcn-sim ${ctl}: ${res.error ?? 'malformed control response'}`);
    return res.result as SimControlCommands[K]['result'];
  }

  ping(): Promise<{ pid: number; version: string }> {
    return this.send('ping');
  }
  async setLatency(op: SimOp, ms: number): Promise<void> {
    await this.send('latency', { op, ms });
  }
  async failCall(op: SimOp, hresult: number, options: FaultOptions = {}): Promise<void> {
    await this.send('fail', { op, hresult, ...options });
  }
  async hang(op: SimOp, options: FaultOptions & { ms?: number } = {}): Promise<void> {
    await this.send('hang', { op, ...options });
  }
  async release(op?: SimOp): Promise<void> {
    await this.send('release', op === undefined ? {} : { op });
  }
  async killClient(op: SimOp, options: FaultOptions = {}): Promise<void> {
    await this.send('kill-client', { op, ...options });
  }
  async setRace(mode: RaceMode, seed?: number): Promise<void> {
    await this.send('race', seed === undefined ? { mode } : { mode, seed });
  }
  async setDeleteNetworkWithEndpoints(mode: 'cascade' | 'refuse'): Promise<void> {
    await this.send('delete-with-endpoints', { mode });
  }
  async restart(
    options: { downMs?: number; dropNamespaces?: boolean | string[]; rehydrate?: boolean } = {},
  ): Promise<void> {
    await this.send('restart', options);
  }

  async setEndpointState(id: string, state: number): Promise<void> {
    await this.send('endpoint-state', { id, state });
  }
  async setVersion(major: number, minor: number, options: { v2?: boolean } = {}): Promise<void> {
    await this.send('version', { major, minor, ...options });
  }
  async addAdapter(adapter: SimAdapter): Promise<void> {
    await this.send('adapter-add', { adapter });
  }
  async removeAdapter(name: string): Promise<void> {
    await this.send('adapter-rm', { name });
  }
  async addContainer(id: string): Promise<void> {
    await this.send('container-add', { id });
  }
  async removeContainer(id: string): Promise<void> {
    await this.send('container-rm', { id });
  }
  host(): Promise<SimHost> {
    return this.send('host');
  }
  dump(): Promise<SimDump> {
    return this.send('dump');
  }
  stats(): Promise<SimStats> {
    return this.send('stats');
  }
  calls(): Promise<SimCallRecord[]> {
    return this.send('calls');
  }
  async reset(options: { objects?: boolean } = {}): Promise<void> {
    await this.send('reset', options);
  }
  async waitIdle(timeoutMs?: number): Promise<void> {
    await this.send('wait-idle', timeoutMs === undefined ? {} : { timeoutMs });
  }
  async shutdown(): Promise<void> {
    await this.send('shutdown');
  }
}

/** A SimControl client for a running simulator. */
export function connectControl(address: string): SimControl {
  return new ControlClient(address);
}

/**
 * Helpers shared by the plugin suites (verbs-cli, ipam, bad-inputs, gc-status,
 * state, concurrency, timeout). Not a test file itself (jest only runs *.test.ts).
 */
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { SimCallRecord, SimControl, SimOp } from '../../src/sim';
import type { Harness } from '../helpers/cni-harness';

/** A fresh HCN namespace (what containerd creates before ADD). */
export async function newNamespace(h: Harness): Promise<string> {
  const id = randomUUID();
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNamespace({}, id);
  return id;
}

/** HNS calls that change something: HcnCreate/Modify/Delete*, HNSCall POST/PUT/DELETE. */
export function isMutation(op: string): boolean {
  return /^Hcn(Create|Modify|Delete)/.test(op) || /^HNSCall (POST|PUT|DELETE) /.test(op);
}

/** The mutations in the call log after sequence number `afterSeq`. */
export async function mutationsSince(h: Harness, afterSeq: number): Promise<SimCallRecord[]> {
  return (await h.sim.control.calls()).filter((c) => c.seq > afterSeq && isMutation(c.op));
}

export async function lastSeq(h: Harness): Promise<number> {
  const calls = await h.sim.control.calls();
  return calls.length ? calls[calls.length - 1]!.seq : 0;
}

/** The files of one record kind under the state directory (attachments, intents, tombstones, quarantine). */
export function recordFiles(h: Harness, dir: 'attachments' | 'intents' | 'tombstones' | 'quarantine'): string[] {
  const d = path.join(h.stateDir, dir);
  return fs.existsSync(d) ? fs.readdirSync(d).sort() : [];
}

/** Every pino line of a stderr (or log file) text, parsed; a line that is not JSON fails the test. */
export function logLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON log line: ${l}`);
      }
    });
}

/** The one line per invocation the dispatcher writes: it alone carries both durationMs and outcome. */
export function outcomeLines(text: string): Array<Record<string, unknown>> {
  return logLines(text).filter((l) => 'durationMs' in l && 'outcome' in l);
}

/** host-local IPAM with its data under the test's tmp dir; host-local keeps <dataDir>/<conf name>/<ip>. */
export function hostLocal(
  h: Harness,
  subnet = '10.244.1.0/24',
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const base = subnet.split('/')[0]!.split('.').slice(0, 3).join('.');
  return {
    type: 'host-local',
    dataDir: path.join(h.tmp, 'ipam'),
    ranges: [[{ subnet, rangeStart: `${base}.10`, rangeEnd: `${base}.60`, gateway: `${base}.1` }]],
    ...extra,
  };
}

/** The addresses host-local holds for the network `name` (file name = IP, first line = container id). */
export function heldIps(h: Harness, name: string): Record<string, string> {
  const dir = path.join(h.tmp, 'ipam', name);
  const out: Record<string, string> = {};
  if (!fs.existsSync(dir)) return out;
  for (const f of fs.readdirSync(dir)) {
    if (/^\d+\.\d+\.\d+\.\d+$/.test(f)) out[f] = fs.readFileSync(path.join(dir, f), 'utf8').split(/\r?\n/)[0]!;
  }
  return out;
}

/** Writes an executable shell script (a fake or wrapping IPAM) and returns its path. */
export function script(dir: string, name: string, body: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * The HNS call that detaches an endpoint from its namespace on an HCN host (src/hns/api.ts detachNamespace); the
 * attach is the same function (a fault on it set after the ADD hits the DEL's detach).
 */
export const DETACH_OP = 'HcnModifyNamespace';

/** Polls until `probe` returns a value (or throws after timeoutMs). */
export async function until<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * Waits until a call of `op` hangs in the simulator (control hang). Not `pendingMutations > 0`: a mutation merely
 * executing before the hung one counts as pending too, and a test that went on then raced the code it holds.
 */
export async function hungOn(control: Pick<SimControl, 'stats'>, op: SimOp, timeoutMs = 20_000): Promise<void> {
  await until(async () => ((await control.stats()).hung.includes(op) ? true : undefined), timeoutMs, `${op} to hang`);
}

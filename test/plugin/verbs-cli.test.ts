/**
 * Every verb through the real CLI entry (dist/cli/hcn-cni.js) as a child process, against the simulator, at every
 * spec version we speak. Per version: the ADD result has that version's shape; CHECK from 0.4.0 (code 1 below);
 * VERSION lists what we speak; GC and STATUS from 1.1.0 (code 1 below); DEL is silent and exits 0. stdout carries
 * exactly one JSON document (or nothing); stderr carries pino JSON lines with exactly one outcome line per verb;
 * with logFile the same lines also land in the file.
 */
import * as fs from 'fs';
import * as path from 'path';
import { renderResult } from '../../src/cni/result';
import { SUPPORTED_VERSIONS, type CniResult } from '../../src/cni/types';
import {
  bridgeConf,
  cniProcess,
  useHarness,
  stateFiles,
  type Harness,
  type ProcessOutcome,
} from '../helpers/cni-harness';
import { logLines, newNamespace, outcomeLines } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

const atLeast = (v: string, min: string) =>
  SUPPORTED_VERSIONS.indexOf(v as never) >= SUPPORTED_VERSIONS.indexOf(min as never);

/** stdout is exactly one JSON document and a newline, or empty. */
function stdoutJson(r: ProcessOutcome): Record<string, unknown> {
  expect(r.stdout.endsWith('\n')).toBe(true);
  expect(r.stdout.indexOf('\n')).toBe(r.stdout.length - 1);
  const parsed = JSON.parse(r.stdout) as Record<string, unknown>;
  expect(r.stdout).toBe(`${JSON.stringify(parsed)}\n`);
  return parsed;
}

/** stderr is pino lines only, with exactly one line that says how the verb ended. */
function outcome(r: ProcessOutcome, verb: string, containerId?: string): Record<string, unknown> {
  const lines = logLines(r.stderr); // throws on a line that is not JSON
  expect(lines.length).toBeGreaterThan(0);
  for (const l of lines)
    expect(l).toMatchObject({
      level: expect.any(Number),
      time: expect.any(String),
      pid: r.pid,
      msg: expect.any(String),
    });
  const out = outcomeLines(r.stderr);
  expect(out).toHaveLength(1);
  const line = out[0]!;
  expect(line).toMatchObject({
    verb,
    durationMs: expect.any(Number),
    outcome: r.exitCode === 0 ? 'ok' : expect.any(Number),
  });
  if (containerId) expect(line.containerId).toBe(containerId);
  else expect(line).not.toHaveProperty('containerId');
  return line;
}

/** The attachment's result as recorded, in the 0.3.x shape (for the legacy versions, whose output drops interfaces). */
function recordedResult(cid: string, v: string): Record<string, unknown> {
  const rec = JSON.parse(fs.readFileSync(path.join(h.stateDir, 'attachments', `${cid}@eth0.json`), 'utf8')) as {
    result: CniResult;
  };
  return { ...renderResult(rec.result, '0.3.0'), cniVersion: v };
}

describe.each(SUPPORTED_VERSIONS.map((v) => [v]))('cniVersion %s through the CLI', (v) => {
  it('ADD, CHECK, VERSION, STATUS, GC and DEL answer in this version', async () => {
    const cid = `pod-${v.replace(/\./g, '')}`;
    const ns = await newNamespace(h);
    const conf = bridgeConf({ cniVersion: v, mtu: 1400 });

    // ADD: the result in this version's shape.
    const add = await cniProcess(h, { verb: 'ADD', conf, containerId: cid, netns: ns });
    expect(add.exitCode).toBe(0);
    const legacy = stdoutJson(add);
    if (!atLeast(v, '0.3.0')) {
      // 0.1.0/0.2.0: the legacy shape (containernetworking/cni pkg/types/020), no interfaces.
      expect(Object.keys(legacy).sort()).toEqual(['cniVersion', 'ip4']);
      expect(legacy.ip4).toEqual({
        ip: expect.stringMatching(/^10\.244\.1\.\d+\/24$/),
        gateway: '10.244.1.1',
        routes: [{ dst: '0.0.0.0/0', gw: '10.244.1.1' }],
      });
    }
    // The rest of the checks read the attachment's result as a 1.0.0 CHECK would (the record keeps it).
    const result = atLeast(v, '0.3.0') ? legacy : recordedResult(cid, v);
    expect(Object.keys(result).sort()).toEqual(['cniVersion', 'interfaces', 'ips', 'routes']);
    expect(result.cniVersion).toBe(v);
    const mac = (result.interfaces as Array<{ mac: string }>)[0]?.mac;
    expect(mac).toMatch(/^00:15:5d(:[0-9a-f]{2}){3}$/);
    expect(result.interfaces).toEqual([{ name: 'eth0', mac, sandbox: ns, ...(v === '1.1.0' ? { mtu: 1400 } : {}) }]);
    const address = (result.ips as Array<{ address: string }>)[0]?.address;
    expect(address).toMatch(/^10\.244\.1\.\d+\/24$/);
    expect(result.ips).toEqual([
      { ...(atLeast(v, '1.0.0') ? {} : { version: '4' }), address, gateway: '10.244.1.1', interface: 0 },
    ]);
    expect(result.routes).toEqual([{ dst: '0.0.0.0/0', gw: '10.244.1.1' }]);
    expect(outcome(add, 'ADD', cid).outcome).toBe('ok');
    // The endpoint in HNS has the reported address and MAC.
    const ep = (await h.sim.control.dump()).endpoints[0]!;
    expect((ep.IpConfigurations as Array<{ IpAddress: string }>).map((c) => c.IpAddress)).toEqual([
      address!.split('/')[0],
    ]);
    expect(String(ep.MacAddress).toLowerCase().replace(/-/g, ':')).toBe(mac);

    // CHECK: from 0.4.0; below it the verb does not exist (code 1).
    const check = await cniProcess(h, {
      verb: 'CHECK',
      conf: { ...conf, prevResult: result },
      containerId: cid,
      netns: ns,
    });
    if (atLeast(v, '0.4.0')) {
      expect({ exit: check.exitCode, out: check.stdout }).toEqual({ exit: 0, out: '' });
      expect(outcome(check, 'CHECK', cid).outcome).toBe('ok');
    } else {
      expect(check.exitCode).toBe(1);
      expect(stdoutJson(check)).toEqual({
        cniVersion: v,
        code: 1,
        msg: `incompatible CNI version: CHECK needs cniVersion 0.4.0 or later, got "${v}"`,
      });
      expect(outcome(check, 'CHECK', cid).outcome).toBe(1);
    }

    // VERSION: our list, echoing the requested version.
    const version = await cniProcess(h, { verb: 'VERSION', conf: { cniVersion: v } });
    expect(version.exitCode).toBe(0);
    expect(stdoutJson(version)).toEqual({
      cniVersion: v,
      supportedVersions: ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'],
    });
    // A successful VERSION writes no log line: it carries no attachment, and the logger is most of its start-up.
    expect(version.stderr).toBe('');

    // STATUS and GC: from 1.1.0.
    const status = await cniProcess(h, { verb: 'STATUS', conf });
    const gc = await cniProcess(h, {
      verb: 'GC',
      conf: { ...conf, 'cni.dev/valid-attachments': [{ containerID: cid, ifname: 'eth0' }] },
    });
    if (v === '1.1.0') {
      expect({ exit: status.exitCode, out: status.stdout }).toEqual({ exit: 0, out: '' });
      expect({ exit: gc.exitCode, out: gc.stdout }).toEqual({ exit: 0, out: '' });
      expect(outcome(status, 'STATUS').outcome).toBe('ok');
      expect(outcome(gc, 'GC').outcome).toBe('ok');
      // GC kept the valid attachment.
      expect((await h.sim.control.stats()).counts.endpoints).toBe(1);
    } else {
      for (const [verb, r] of [
        ['STATUS', status],
        ['GC', gc],
      ] as const) {
        expect(r.exitCode).toBe(1);
        expect(stdoutJson(r)).toEqual({
          cniVersion: v,
          code: 1,
          msg: `incompatible CNI version: ${verb} needs cniVersion 1.1.0 or later, got "${v}"`,
        });
        expect(outcome(r, verb).outcome).toBe(1);
      }
    }

    // DEL: silent, exit 0, everything gone.
    const del = await cniProcess(h, {
      verb: 'DEL',
      conf: { ...conf, prevResult: result },
      containerId: cid,
      netns: ns,
    });
    expect({ exit: del.exitCode, out: del.stdout }).toEqual({ exit: 0, out: '' });
    expect(outcome(del, 'DEL', cid).outcome).toBe('ok');
    expect((await h.sim.control.stats()).counts.endpoints).toBe(0);
    expect(stateFiles(h).filter((f) => f.startsWith('attachments/') || f.startsWith('intents/'))).toEqual([]);
  });
});

describe('through the CLI, whatever the version', () => {
  it('a 1.1.0 ADD without mtu reports no mtu', async () => {
    const ns = await newNamespace(h);
    const add = await cniProcess(h, {
      verb: 'ADD',
      conf: bridgeConf({ cniVersion: '1.1.0' }),
      containerId: 'no-mtu',
      netns: ns,
    });
    expect(add.exitCode).toBe(0);
    expect((stdoutJson(add).interfaces as Array<Record<string, unknown>>)[0]).not.toHaveProperty('mtu');
  });

  it('a failing verb: error JSON on stdout only, one outcome line with its code on stderr', async () => {
    const r = await cniProcess(h, {
      verb: 'ADD',
      conf: bridgeConf({ createNetwork: false, networkName: 'absent' }),
      containerId: 'pod-x',
      netns: 'none',
    });
    expect(r.exitCode).toBe(1);
    expect(stdoutJson(r)).toEqual({
      cniVersion: '1.0.0',
      code: 101,
      msg: 'HNS network "absent" does not exist; create it, or set "createNetwork": true with a "subnet"',
    });
    const line = outcome(r, 'ADD', 'pod-x');
    expect(line).toMatchObject({
      outcome: 101,
      ifname: 'eth0',
      network: 'cbr0',
      msg: expect.stringContaining('does not exist'),
    });
  });

  it('with logFile, the same JSON lines land in the file (appended, one outcome line per verb)', async () => {
    const logFile = path.join(h.tmp, 'logs', 'hcn-cni.log');
    const conf = bridgeConf({ cniVersion: '1.1.0', logFile });
    const ns = await newNamespace(h);
    const add = await cniProcess(h, { verb: 'ADD', conf, containerId: 'pod-log', netns: ns });
    expect(add.exitCode).toBe(0);
    const afterAdd = fs.readFileSync(logFile, 'utf8');
    expect(logLines(afterAdd)).toEqual(logLines(add.stderr));

    const del = await cniProcess(h, { verb: 'DEL', conf, containerId: 'pod-log', netns: ns });
    expect(del.exitCode).toBe(0);
    const all = fs.readFileSync(logFile, 'utf8');
    expect(all.startsWith(afterAdd)).toBe(true);
    expect(logLines(all.slice(afterAdd.length))).toEqual(logLines(del.stderr));
    expect(outcomeLines(all).map((l) => [l.verb, l.containerId, l.outcome])).toEqual([
      ['ADD', 'pod-log', 'ok'],
      ['DEL', 'pod-log', 'ok'],
    ]);
    // Nothing of the log reached stdout.
    expect(add.stdout).not.toMatch(/"level"/);
  });
});

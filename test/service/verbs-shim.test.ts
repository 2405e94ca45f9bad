/**
 * Every CNI verb through the native shim and the resident service, against the simulator, at every spec
 * version we speak — the same answers the standalone executable gives (test/plugin/verbs-cli.test.ts), served by
 * the service (the standalone executable never runs), with the verb's log lines on the shim's stderr.
 */
import { SUPPORTED_VERSIONS } from '../../src/cni/types';
import { bridgeConf, cniProcess, useHarness, type Harness } from '../helpers/cni-harness';
import { logLines, newNamespace, outcomeLines, recordFiles } from '../plugin/support';
import { makeBin, startServiceProcess, viaShim, type Bin, type RunningService } from './support';

let h: Harness;
let bin: Bin;
let service: RunningService;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(60_000);

beforeEach(async () => {
  bin = makeBin(h);
  service = await startServiceProcess(h);
});
afterEach(async () => {
  await service.stop();
});

const atLeast = (v: string, min: string) =>
  SUPPORTED_VERSIONS.indexOf(v as never) >= SUPPORTED_VERSIONS.indexOf(min as never);

describe.each(SUPPORTED_VERSIONS.map((v) => [v]))('cniVersion %s through the shim', (v) => {
  it('ADD, CHECK, VERSION, STATUS, GC and DEL are answered by the service', async () => {
    const cid = `pod-${v.replace(/\./g, '')}`;
    const ns = await newNamespace(h);
    const conf = bridgeConf({ cniVersion: v, mtu: 1400 });

    const add = await viaShim(h, bin, service.address, { verb: 'ADD', conf, containerId: cid, netns: ns });
    expect(add.exitCode).toBe(0);
    const result = add.json!;
    expect(add.stdout).toBe(`${JSON.stringify(result)}\n`);
    expect(result.cniVersion).toBe(v);
    if (atLeast(v, '0.3.0')) {
      expect(Object.keys(result).sort()).toEqual(['cniVersion', 'interfaces', 'ips', 'routes']);
      const mac = (result.interfaces as Array<{ mac: string }>)[0]?.mac;
      expect(result.interfaces).toEqual([{ name: 'eth0', mac, sandbox: ns, ...(v === '1.1.0' ? { mtu: 1400 } : {}) }]);
      expect((result.ips as Array<{ address: string }>)[0]?.address).toMatch(/^10\.244\.1\.\d+\/24$/);
    } else {
      // 0.1.0/0.2.0: the legacy shape, no interfaces.
      expect(Object.keys(result).sort()).toEqual(['cniVersion', 'ip4']);
      expect((result.ip4 as { ip: string }).ip).toMatch(/^10\.244\.1\.\d+\/24$/);
    }
    // The log lines of the verb reach the shim's stderr, written by the service process.
    const lines = logLines(add.stderr);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => l.pid === service.child.pid)).toBe(true);
    expect(outcomeLines(add.stderr)).toEqual([
      expect.objectContaining({ verb: 'ADD', containerId: cid, outcome: 'ok' }),
    ]);
    expect(recordFiles(h, 'attachments')).toEqual([`${cid}@eth0.json`]);

    const check = await viaShim(h, bin, service.address, {
      verb: 'CHECK',
      conf: { ...conf, prevResult: result },
      containerId: cid,
      netns: ns,
    });
    if (atLeast(v, '0.4.0')) expect({ exit: check.exitCode, out: check.stdout }).toEqual({ exit: 0, out: '' });
    else
      expect({ exit: check.exitCode, json: check.json }).toEqual({
        exit: 1,
        json: expect.objectContaining({ cniVersion: v, code: 1 }),
      });

    const version = await viaShim(h, bin, service.address, { verb: 'VERSION', conf: { cniVersion: v } });
    expect({ exit: version.exitCode, json: version.json }).toEqual({
      exit: 0,
      json: { cniVersion: v, supportedVersions: [...SUPPORTED_VERSIONS] },
    });

    const status = await viaShim(h, bin, service.address, { verb: 'STATUS', conf });
    const gc = await viaShim(h, bin, service.address, {
      verb: 'GC',
      conf: { ...conf, 'cni.dev/valid-attachments': [{ containerID: cid, ifname: 'eth0' }] },
    });
    if (atLeast(v, '1.1.0')) {
      expect({ exit: status.exitCode, out: status.stdout }).toEqual({ exit: 0, out: '' });
      expect({ exit: gc.exitCode, out: gc.stdout }).toEqual({ exit: 0, out: '' });
      expect(recordFiles(h, 'attachments')).toEqual([`${cid}@eth0.json`]); // GC kept the valid attachment
    } else {
      expect(status.json).toMatchObject({ cniVersion: v, code: 1 });
      expect(gc.json).toMatchObject({ cniVersion: v, code: 1 });
    }

    const del = await viaShim(h, bin, service.address, {
      verb: 'DEL',
      conf: { ...conf, prevResult: result },
      containerId: cid,
      netns: ns,
    });
    expect({ exit: del.exitCode, out: del.stdout }).toEqual({ exit: 0, out: '' });
    expect(recordFiles(h, 'attachments')).toEqual([]);
    const dump = await h.sim.control.dump();
    expect(dump.endpoints).toEqual([]);

    // All of it ran in the service; the standalone executable never started.
    expect(bin.standaloneRuns()).toBe(0);
    expect((await service.status()).served).toBe(6);
  });
});

describe('without CNI_COMMAND the shim is the operator tool', () => {
  it('hands `hcn-cni service --json` to the standalone executable, which asks the service', async () => {
    const { spawnSync } = await import('child_process');
    const r = spawnSync(bin.shim, ['service', '--json'], {
      env: { PATH: process.env.PATH, HCN_CNI_SERVICE: service.address },
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      running: true,
      address: service.address,
      pid: service.child.pid,
      served: 0,
    });
    expect(bin.standaloneRuns()).toBe(1);
  });
});

describe('bad input through the shim', () => {
  it('gives byte for byte what the standalone executable gives', async () => {
    const conf = bridgeConf({ cniVersion: '1.1.0' });
    const cases: Array<{ what: string; env?: Record<string, string | undefined>; stdin: string | Buffer }> = [
      { what: 'stdin over 1 MiB', stdin: Buffer.alloc(1024 * 1024 + 10, 0x20) },
      { what: 'stdin not JSON', stdin: '{"cniVersion":' },
      {
        what: 'no CNI_CONTAINERID',
        env: { CNI_CONTAINERID: undefined },
        stdin: JSON.stringify({ ...conf, stateDir: h.stateDir }),
      },
      {
        what: 'unknown CNI_COMMAND',
        env: { CNI_COMMAND: 'FROB' },
        stdin: JSON.stringify({ ...conf, stateDir: h.stateDir }),
      },
      { what: 'bad config value', stdin: JSON.stringify({ ...conf, mtu: 'big', stateDir: h.stateDir }) },
    ];
    for (const c of cases) {
      const call = { verb: 'ADD' as const, conf, ...(c.env ? { env: c.env } : {}) };
      const shim = await viaShim(h, bin, service.address, call, c.stdin);
      const standalone = await cniProcessWithStdin(call, c.stdin);
      // How far past 1 MiB a reader gets depends on pipe chunking; the count in the message is not the point.
      const norm = (s: string) => s.replace(/stdin is \d+ bytes/, 'stdin is N bytes');
      expect({ what: c.what, exit: shim.exitCode, out: norm(shim.stdout) }).toEqual({
        what: c.what,
        exit: standalone.exitCode,
        out: norm(standalone.stdout),
      });
      expect(shim.exitCode).toBe(1);
    }
    expect(bin.standaloneRuns()).toBe(0);
  });
});

/** The standalone executable with raw stdin (cniProcess writes the conf itself). */
async function cniProcessWithStdin(call: Parameters<typeof cniProcess>[1], stdin: string | Buffer) {
  const { spawn } = await import('child_process');
  const { cniEnv, CLI } = await import('../helpers/cni-harness');
  return new Promise<{ exitCode: number; stdout: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [CLI], {
      env: { PATH: process.env.PATH, ...cniEnv(h, call) } as NodeJS.ProcessEnv,
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stdin.on('error', () => undefined);
    child.on('error', reject);
    child.on('close', (code) => resolve({ exitCode: code ?? -1, stdout }));
    child.stdin.end(stdin);
  });
}

/**
 * The stack across processes and time: the facade's timeout against a hung HNS (the call keeps running and
 * commits), a CNI-like child SIGKILLed by the simulator in the middle of HcnCreateNetwork (the network still
 * appears: the seed-000 leak, reproduced end to end), and a missing HCN library (no crash, 0x8007007E).
 */
import { spawn, spawnSync } from 'child_process';
import * as path from 'path';

import { isTimeout } from '../../src/hns/hcn-error';
import { Hcn } from '../../src/hns/hcn';
import { until } from '../plugin/support';
import { ADDON_PATH, FIXTURES, describeError, nat, rejectionOf, useHcn } from './helpers';

const fx = useHcn();

describe('Hcn timeout against a hung HNS', () => {
  test('a hung create rejects with ERROR_TIMEOUT after timeoutMs; HNS still commits it after release', async () => {
    const { hcn, control } = fx;
    await control.hang('HcnCreateNetwork');
    const impatient = new Hcn(hcn.native, hcn.capabilities, { timeoutMs: 300 });
    const started = Date.now();
    const e = await rejectionOf(impatient.createNetwork(nat('slow', '172.16.0.0/24')));
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(295);
    expect(elapsed).toBeLessThan(2_000);
    expect(describeError(e)).toEqual({
      op: 'HcnCreateNetwork',
      hresult: '0x800705B4',
      code: 'ERROR_TIMEOUT',
      errorRecord: null,
      message:
        'HcnCreateNetwork failed: This operation returned because the timeout period expired. (0x800705B4 ERROR_TIMEOUT): no answer from HNS within 0.3s',
      isNotFound: false,
      isUnreachable: true,
      isAlreadyExists: false,
      isAdapterUnavailable: false,
    });
    expect(isTimeout(e)).toBe(true);
    // The stack points at the caller, not at the timer.
    expect(e.stack).toContain('processes.test.ts');

    // Still hung: reads are served, and the network is not there yet.
    expect(await hcn.enumerateNetworks({ Name: 'slow' })).toEqual([]);
    expect((await control.stats()).pendingMutations).toBe(1);
    await control.release('HcnCreateNetwork');
    await control.waitIdle(5_000);
    const [n] = await hcn.listNetworks({ Name: 'slow' });
    expect(n).toMatchObject({ Name: 'slow', Ipams: [{ Subnets: [{ IpAddressPrefix: '172.16.0.0/24' }] }] });
    const record = (await control.calls()).find((c) => c.op === 'HcnCreateNetwork');
    expect(record).toMatchObject({ pid: process.pid, id: n.ID, hr: 0, fault: 'hung' });
  });

  test('a hung read times out too, and its late failure after release is swallowed (no unhandled rejection)', async () => {
    const { hcn, control } = fx;
    const impatient = new Hcn(hcn.native, hcn.capabilities, { timeoutMs: 200 });
    await control.hang('HcnOpenNetwork');
    const e = await rejectionOf(impatient.getNetwork('0badf00d-0000-4000-8000-000000000001'));
    expect(describeError(e)).toMatchObject({
      op: 'HcnQueryNetworkProperties',
      hresult: '0x800705B4',
      isUnreachable: true,
    });
    // The late failure has no caller left; it must not surface (Jest fails the running test on an unhandled rejection).
    await control.release();
    // The native call now fails with 0x803B0001, after its caller gave up: once the simulator has answered it.
    const hung = await until(
      async () => (await control.calls()).find((c) => c.op === 'HcnOpenNetwork' && c.hr === 0x803b0001),
      20_000,
      'the released call to be answered',
    );
    expect(hung).toMatchObject({ hr: 0x803b0001, fault: 'hung' });
    // The facade keeps working with its normal timeout.
    await expect(hcn.listNetworks()).resolves.toEqual([]);
  });
});

describe('kill-client: a CNI-like child SIGKILLed during HcnCreateNetwork', () => {
  function runChild(
    name: string,
  ): Promise<{ pid: number; code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(FIXTURES, 'create-network-child.js'), name, ADDON_PATH], {
        env: { ...process.env, HCN_SIM: fx.sim.address },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000); // a safety net; the simulator should be first
      child.once('error', reject);
      child.once('close', (code, signal) => {
        clearTimeout(t);
        resolve({ pid: child.pid!, code, signal, stdout, stderr });
      });
    });
  }

  test('the child dies by SIGKILL, the create outlives it and commits the name it asked for', async () => {
    const { hcn, control } = fx;
    const name = 'cni-add-网络-killed';
    // Hold the create in the service so "after the caller died, before the commit" is a state we can look at.
    await control.hang('HcnCreateNetwork');
    await control.killClient('HcnCreateNetwork');
    const child = await runChild(name);
    expect(child).toEqual({
      pid: child.pid,
      code: null,
      signal: 'SIGKILL',
      stdout: `calling HcnCreateNetwork pid=${child.pid}\n`,
      stderr: '',
    });

    // The caller is gone; HNS has not finished: nothing to see yet, so a DEL now would find nothing.
    expect(await hcn.enumerateNetworks({ Name: name })).toEqual([]);
    await control.release();
    await control.waitIdle(5_000);

    // ... and then the network exists: the leak seed 000 describes.
    const nets = await hcn.listNetworks({ Name: name });
    expect(nets.map((n) => n.Name)).toEqual([name]);
    const record = (await control.calls()).find((c) => c.op === 'HcnCreateNetwork');
    expect(record).toMatchObject({ pid: child.pid, id: nets[0].ID, hr: 0 });
    expect(record!.fault!.split(',').sort()).toEqual(['hung', 'killed-client']);
  });

  test('without a hang: the kill lands at acceptance and the commit follows on its own', async () => {
    const { hcn, control } = fx;
    await control.killClient('HcnCreateNetwork');
    const child = await runChild('killed-plain');
    expect([child.signal, child.stdout]).toEqual(['SIGKILL', `calling HcnCreateNetwork pid=${child.pid}\n`]);
    await control.waitIdle(5_000);
    expect((await hcn.listNetworks({ Name: 'killed-plain' })).map((n) => n.Name)).toEqual(['killed-plain']);
  });
});

describe('a missing HCN library', () => {
  test('loadNative with libraryPath pointing nowhere: capabilities false, calls reject with 0x8007007E, no crash', () => {
    const missing = '/nonexistent/hcn-cni/libhcnsim.so';
    const child = spawnSync(process.execPath, [path.join(FIXTURES, 'missing-library-child.js'), missing, ADDON_PATH], {
      encoding: 'utf8',
      timeout: 15_000,
      env: { ...process.env, HCN_SIM: fx.sim.address }, // a live simulator: the calls must not reach it anyway
    });
    expect({ status: child.status, signal: child.signal, stderr: child.stderr }).toEqual({
      status: 0,
      signal: null,
      stderr: '',
    });
    const out = JSON.parse(child.stdout) as Record<string, any>;
    expect(out.capabilities).toMatchObject({
      v2Supported: false,
      v1Supported: false,
      hcnLibrary: null,
      v1Library: null,
      adapterSource: 'none',
    });
    expect(out.capabilities.loadError).toContain(missing);
    expect(out.capabilities.missing).toEqual(
      expect.arrayContaining(['HcnCreateNetwork', 'HcnEnumerateNetworks', 'HNSCall', 'CoTaskMemFree']),
    );

    const modNotFound = (op: string) => ({
      isHcnError: true,
      op,
      hresult: 0x8007007e,
      code: 'ERROR_MOD_NOT_FOUND',
      errorRecord: null,
      message: `${op} failed: The specified module could not be found. (0x8007007E ERROR_MOD_NOT_FOUND)`,
      isUnreachable: false,
      isNotFound: false,
    });
    expect(out.listNetworks).toEqual(modNotFound('HcnEnumerateNetworks'));
    expect(out.enumerateEndpoints).toEqual(modNotFound('HcnEnumerateEndpoints'));
    expect(out.createNetwork).toEqual(modNotFound('HcnCreateNetwork'));
    expect(out.createEndpoint).toEqual(modNotFound('HcnOpenNetwork')); // an endpoint create opens its network first
    expect(out.getNamespace).toEqual(modNotFound('HcnOpenNamespace'));
    expect(out.deleteNetwork).toEqual(modNotFound('HcnDeleteNetwork'));
    expect(out.version).toEqual(modNotFound('HNSCall'));
    expect(out.listAdapters).toEqual({ value: [] });
    expect(out.stats).toEqual({ calls: {}, frees: 0 });
  });
});

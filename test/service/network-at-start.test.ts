/**
 * `hcn-cni serve --create-network FILE`: once the service accepts, it creates the bridge network the configuration
 * would create on the first ADD, so that no pod's ADD binds the NIC; a network that is already there is left as it
 * is (same id). Without the flag the first ADD creates it, as before.
 */
import * as fs from 'fs';
import * as path from 'path';
import { bridgeConf, useHarness, type Harness } from '../helpers/cni-harness';
import { silentLogger } from '../../src/log/logger';
import { prepareNetwork } from '../../src/plugin/network-at-start';
import { parseAddConf } from '../helpers/net-conf';
import { lastSeq, mutationsSince, newNamespace, until } from '../plugin/support';
import { makeBin, startServiceProcess, viaShim, type RunningService } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));
let service: RunningService | undefined;
afterEach(async () => {
  await service?.stop();
  service = undefined;
});

function conflist(): string {
  const file = path.join(h.tmp, '10-hcn-cni.conflist');
  const { cniVersion, name, ...plugin } = bridgeConf({ stateDir: h.stateDir });
  fs.writeFileSync(file, JSON.stringify({ cniVersion, name, plugins: [plugin] }));
  return file;
}

const cbr0 = async () => (await h.sim.control.dump()).networks.filter((n) => n.Name === 'cbr0').map((n) => n.ID);

it('creates the configured network at start, before any ADD; a second start finds it and keeps it', async () => {
  expect(await cbr0()).toEqual([]);
  service = await startServiceProcess(h, undefined, ['--create-network', conflist()]);
  await until(async () => ((await cbr0()).length === 1 ? true : undefined), 20_000, 'the network');
  expect((await service.status()).served).toBe(0);
  await until(
    async () => (/network at start: created cbr0/.test(service!.stderr()) ? true : undefined),
    20_000,
    'the log line',
  );
  const [id] = await cbr0();
  await service.stop();

  service = await startServiceProcess(h, undefined, ['--create-network', conflist()]);
  await until(
    async () => (/network at start: already there: cbr0/.test(service!.stderr()) ? true : undefined),
    20_000,
    'the log line',
  );
  expect(await cbr0()).toEqual([id]);
  // The first pod attaches to it; nothing more is created.
  const bin = makeBin(h);
  const add = await viaShim(h, bin, service.address, {
    verb: 'ADD',
    conf: bridgeConf(),
    containerId: 'p1',
    netns: await newNamespace(h),
  });
  expect(add.exitCode).toBe(0);
  expect(await cbr0()).toEqual([id]);
});

it('refuses an unreadable configuration in one line before it starts', async () => {
  const { spawnSync } = await import('child_process');
  const { CLI } = await import('../helpers/cni-harness');
  const r = spawnSync(
    process.execPath,
    [CLI, 'serve', '--listen', path.join(h.tmp, 'x.sock'), '--create-network', path.join(h.tmp, 'none.conflist')],
    {
      env: { PATH: process.env.PATH, HCN_SIM: h.sim.address },
      encoding: 'utf8',
    },
  );
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/^hcn-cni serve: --create-network: .*none\.conflist/);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
});

it('a delegated-NIC configuration makes no network at start (each pod has its own): not configured, HNS untouched', async () => {
  const conf = parseAddConf({ mode: 'delegatedNic', subnet: '10.10.3.0/24', createNetwork: true });
  const seq = await lastSeq(h);
  const got = await prepareNetwork(conf, { hns: h.deps.hns, networks: h.deps.networks }, silentLogger);
  expect(got).toEqual({ outcome: 'not-configured', why: 'delegated-NIC mode makes one network per pod' });
  expect(await mutationsSince(h, seq)).toEqual([]);
});

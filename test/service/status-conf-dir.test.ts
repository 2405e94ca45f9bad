/**
 * The service says which CNI configuration directory it serves networks from (`serve --conf-dir`): in its status,
 * in `hcn-cni service`, and in the doctor's report when the doctor asks it; a service given none says so.
 */
import * as fs from 'fs';
import * as path from 'path';
import { runDoctor } from '../../src/cli/doctor';
import type { Finding } from '../../src/doctor/finding';
import { runOps } from '../../src/cli/operator';
import { useHarness, type Harness } from '../helpers/cni-harness';
import { startServiceProcess } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(60_000);

async function doctorSays(address: string): Promise<Finding> {
  let out = '';
  await runDoctor(['--json', '--state-dir', h.stateDir, '--service', address], {
    env: { HCN_SIM: h.sim.address },
    load: {},
    out: (s) => (out += s),
    err: () => undefined,
  });
  return (JSON.parse(out) as { findings: Finding[] }).findings.find((f) => f.subject === 'service')!;
}

async function serviceText(address: string): Promise<string> {
  let out = '';
  await runOps(['service', '--state-dir', h.stateDir], {
    env: { HCN_SIM: h.sim.address, HCN_CNI_SERVICE: address },
    load: {},
    out: (s) => (out += s),
    err: () => undefined,
  });
  return out;
}

it('a service given --conf-dir names it in its status, in `hcn-cni service` and in the doctor report', async () => {
  const confDir = path.join(h.tmp, 'cni-conf');
  fs.mkdirSync(confDir, { recursive: true });
  const service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '0', '--conf-dir', confDir]);
  try {
    expect((await service.status()).confDir).toBe(confDir);
    expect(await serviceText(service.address)).toContain(`\nconf dir: ${confDir}\n`);
    const f = await doctorSays(service.address);
    expect(f.why).toMatch(new RegExp(`; conf dir ${confDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    expect(f.detail).toMatchObject({ confDir });
  } finally {
    await service.stop();
  }
});

it('a service given no conf dir says so', async () => {
  const service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '0']);
  try {
    expect((await service.status()).confDir).toBeUndefined();
    expect(await serviceText(service.address)).toContain('\nconf dir: none given');
    expect((await doctorSays(service.address)).why).toMatch(/; no conf dir \(a network is served once a verb/);
  } finally {
    await service.stop();
  }
});

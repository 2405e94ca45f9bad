/**
 * An intent protects what it planned only while its process runs AND before its deadline: a process hung for longer
 * than every HNS and IPAM bound allows must not hold its objects (or a NIC) forever. The unit cases use the real
 * start time of this very process (so only the deadline can make the intent dead); the audit case leaves a real
 * intent behind with the simulator: an ADD of this process whose attach HNS holds until the ADD has given up.
 */
import * as fs from 'fs';
import * as path from 'path';
import { V2Api } from '../../src/hns/api';
import { hostOs } from '../../src/hns/host-os';
import { loadNative } from '../../src/hns/native';
import { silentLogger } from '../../src/log/logger';
import { audit } from '../../src/orphans/audit';
import { intentLiveness } from '../../src/state/liveness';
import type { IntentRecord } from '../../src/state/records';
import { StateStore } from '../../src/state/store';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { newNamespace } from '../plugin/support';
import { endpointName } from '../../src/orphans/ownership';

let h: Harness;
useHarness(undefined, (x) => (h = x));

const owner = { containerId: 'c1', ifname: 'eth0' };

describe('intentLiveness', () => {
  const os = () => hostOs(loadNative().native);
  const mine = (deadline: number): IntentRecord => ({
    kind: 'intent',
    schema: 1,
    id: 'i1',
    ...owner,
    planned: [],
    pid: process.pid,
    pidStartTime: os().processStartTime(process.pid),
    createdAt: 0,
    deadline,
  });

  it('a running process with the same start time is live until its deadline, and dead from it on', () => {
    const i = mine(1_000_000);
    expect(intentLiveness(i, undefined, 999_999, os().processStartTime)).toEqual({
      live: true,
      reason: `its process ${process.pid} is still running`,
    });
    expect(intentLiveness(i, undefined, 1_000_000, os().processStartTime)).toEqual({
      live: false,
      reason: 'its deadline has passed',
    });
  });

  it('a pid that now belongs to another process is dead, before its deadline too', () => {
    const i = { ...mine(1_000_000), pidStartTime: 'another start' };
    expect(intentLiveness(i, undefined, 0, os().processStartTime).live).toBe(false);
  });
});

describe('the audit and an ADD hung past its deadline', () => {
  it('keeps the endpoint a hung ADD of a running process claims before the deadline, deletes it after', async () => {
    const conf = bridgeConf({ cniVersion: '1.1.0', hnsTimeoutSeconds: 1 });
    expect((await cni(h, { verb: 'ADD', conf, containerId: 'pod-a', netns: await newNamespace(h) })).exitCode).toBe(0);
    // HNS holds the attach; the ADD gives up (hnsTimeoutSeconds) and leaves its intent: this process, still running.
    await h.sim.control.hang('HcnModifyNamespace');
    const hung = await cni(h, { verb: 'ADD', conf, containerId: 'pod-hung', netns: await newNamespace(h) });
    expect(hung.json).toMatchObject({ code: 11 });
    await h.sim.control.release();
    await h.sim.control.waitIdle();
    const intent = JSON.parse(
      fs.readFileSync(path.join(h.stateDir, 'intents', 'pod-hung@eth0.json'), 'utf8'),
    ) as IntentRecord;
    expect(intent.pid).toBe(process.pid);

    const os = hostOs(loadNative().native);
    const store = new StateStore(h.stateDir, { os });
    const api = new V2Api(h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }));
    const verdictAt = async (now: number, dryRun: boolean) => {
      const report = await audit({ api, store, os, log: silentLogger, graceMs: 60_000, now: () => now, dryRun });
      return report.plan.judged
        .filter((j) => j.name === endpointName({ containerId: 'pod-hung', ifname: 'eth0' }))
        .map((j) => j.verdict);
    };
    expect(await verdictAt(intent.deadline - 1, true)).toEqual(['in-flight']);
    expect(await verdictAt(intent.deadline, false)).toEqual(['orphan']);
    expect(
      (await h.sim.control.dump()).endpoints
        .map((e) => e.Name)
        .filter((n) => n === endpointName({ containerId: 'pod-hung', ifname: 'eth0' })),
    ).toEqual([]);
  });
});

/**
 * Repair, the service half: a service serving a configuration with `repair: true` repairs the pods an HNS
 * restart left without endpoints as soon as HNS answers again (repair-trigger.ts), through its per-attachment queue;
 * STATUS returns to 0 and the service's status counts the repairs; and on the node agent's interval, with the audit
 * (then the repair) or, for `"audit": false`, the repair alone. Off by default: nothing is repaired.
 */
import type { Service } from '../../src/service/service';
import { bridgeConf, useHarness, type Harness } from '../helpers/cni-harness';
import { newNamespace, until } from '../plugin/support';
import { inProcessServices, viaShim } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(60_000);
const services = inProcessServices(() => h);

const start = (agent?: { probeMs?: number; tickMs?: number; hnsNotifications?: boolean }): Promise<Service> =>
  services.start(agent ? { agent } : {});

/** Two pods (HCN namespace, Docker-style), an HNS restart, then STATUS until HNS answers again. */
async function podsThenRestart(s: Service, conf: Record<string, unknown>): Promise<{ code: number; ns: string }> {
  const ns = await newNamespace(h);
  await h.sim.control.addContainer('pod-docker');
  for (const [id, netns] of [
    ['pod-ns', ns],
    ['pod-docker', 'none'],
  ] as const) {
    expect((await viaShim(h, services.bin, s.address, { verb: 'ADD', conf, containerId: id, netns })).exitCode).toBe(0);
  }
  // Down until STATUS has said so: an outage of fixed length could end before a slow STATUS gets there. A restart
  // without down time then ends it.
  await h.sim.control.restart({ downMs: 120_000 });
  // STATUS while HNS is down (50: the calls go unanswered), then until it answers again (51, or 0 once repaired).
  const status = async () => (await viaShim(h, services.bin, s.address, { verb: 'STATUS', conf })).json?.code as number;
  await until(async () => ((await status()) === 50 ? true : undefined), 20_000, 'STATUS 50 while HNS is down');
  await h.sim.control.restart({ downMs: 0 });
  const code = await until(
    async () => {
      const c = (await status()) ?? 0;
      return c === 50 ? undefined : c;
    },
    20_000,
    'HNS to answer again',
  );
  return { code, ns };
}

describe('repair in the service', () => {
  it('repair: true — the pods are repaired once HNS answers again; STATUS returns to 0; the status counts them', async () => {
    const s = await start();
    const conf = bridgeConf({ cniVersion: '1.1.0', repair: true });
    const { ns } = await podsThenRestart(s, conf);
    // The trigger runs right after HNS answered again; STATUS reaches 0 when it is done.
    await until(
      async () =>
        (await viaShim(h, services.bin, s.address, { verb: 'STATUS', conf })).exitCode === 0 ? true : undefined,
      20_000,
      'STATUS 0',
    );
    expect((await h.sim.control.dump()).endpoints).toHaveLength(2);
    // STATUS sees an endpoint once HNS has it again; the count is taken at the repair's commit, just after.
    await until(() => (s.status().tally.repairs.repaired === 2 ? true : undefined), 20_000, 'both repairs counted');
    expect(s.status().tally.repairs).toEqual({ repaired: 2 });
    for (const [id, netns] of [
      ['pod-docker', 'none'],
      ['pod-ns', ns],
    ] as const) {
      const check = await viaShim(h, services.bin, s.address, { verb: 'CHECK', conf, containerId: id, netns });
      expect({ id, exit: check.exitCode }).toEqual({ id, exit: 0 });
    }
  });

  it('audit: true, repair: true — audited and then repaired on the interval, though no call saw HNS fail', async () => {
    // Neither the probe nor HNS's notifications: only the interval.
    const s = await start({ probeMs: 0, tickMs: 100, hnsNotifications: false });
    const conf = bridgeConf({ cniVersion: '1.1.0', repair: true, auditIntervalSeconds: 1 });
    const ns = await newNamespace(h);
    expect(
      (await viaShim(h, services.bin, s.address, { verb: 'ADD', conf, containerId: 'pod-ns', netns: ns })).exitCode,
    ).toBe(0);
    await h.sim.control.restart({ downMs: 0 });
    // The tally counts a repair once it is committed, after its endpoint is back in HNS: wait for the count.
    await until(() => (s.status().tally.repairs.repaired ? true : undefined), 20_000, 'the repair after an audit');
    expect(s.status().tally.repairs).toEqual({ repaired: 1 });
    expect((await h.sim.control.dump()).endpoints).toHaveLength(1);
    expect(s.status().agent.audits).toBeGreaterThanOrEqual(1);
  });

  it('audit: false, repair: true — repaired on the interval, though no call saw HNS fail, and never audited', async () => {
    // No probe and no notifications: only the interval can notice a restart no call of the service saw (downMs 0: no
    // call fails).
    const s = await start({ probeMs: 0, tickMs: 100, hnsNotifications: false });
    const conf = bridgeConf({ cniVersion: '1.1.0', audit: false, repair: true, auditIntervalSeconds: 1 });
    const ns = await newNamespace(h);
    expect(
      (await viaShim(h, services.bin, s.address, { verb: 'ADD', conf, containerId: 'pod-ns', netns: ns })).exitCode,
    ).toBe(0);
    await h.sim.control.restart({ downMs: 0 });
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
    await until(() => (s.status().tally.repairs.repaired ? true : undefined), 20_000, 'the interval repair');
    expect(s.status().tally.repairs).toEqual({ repaired: 1 });
    expect((await h.sim.control.dump()).endpoints).toHaveLength(1);
    // The operator turned the audit off: the agent repairs without auditing.
    expect(s.status().agent.audits).toBe(0);
    expect(s.status().tally.audits).toBe(0);
    const check = await viaShim(h, services.bin, s.address, { verb: 'CHECK', conf, containerId: 'pod-ns', netns: ns });
    expect(check.exitCode).toBe(0);
  });

  it('off by default — nothing is repaired, STATUS stays 51', async () => {
    const s = await start();
    const conf = bridgeConf({ cniVersion: '1.1.0' });
    expect((await podsThenRestart(s, conf)).code).toBe(51);
    expect(await s.repair()).toEqual([]);
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
    expect((await viaShim(h, services.bin, s.address, { verb: 'STATUS', conf })).json).toMatchObject({ code: 51 });
    expect(s.status().tally.repairs).toEqual({});
  });
});

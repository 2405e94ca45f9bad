/**
 * Back-off for the pods repair cannot fix (src/service/agent/repair-backoff.ts): a pod whose repair keeps failing sits out
 * 1, 2, 4, … (at most MAX_SKIPPED) of its network's passes, so it is attempted far fewer times than there are passes;
 * it is attempted at once again when its record changes, and one that becomes repairable is repaired once its
 * back-off runs out. HNS not answering is no failure of the pod. The node agent applies it and still names the pod.
 */
import type { IpamClient, NetConf } from '../../src/cni/types';
import type { HnsApi } from '../../src/hns/api';
import { silentLogger } from '../../src/log/logger';
import type { PodVerdict } from '../../src/plugin/pod-health';
import type { PodRepair, RepairOutcome } from '../../src/plugin/verbs/repair';
import type { PluginDeps } from '../../src/plugin/deps';
import type { AttachmentRecord } from '../../src/state/records';
import { HnsHealth } from '../../src/service/observability/hns-health';
import { NodeAgent } from '../../src/service/agent/node-agent';
import { MAX_SKIPPED, RepairBackoff } from '../../src/service/agent/repair-backoff';
import { attachmentRecord } from '../helpers/state-records';
import { until } from '../plugin/support';
import { agentParts } from './agent-parts';

const NET = '/state\0cbr0';
const pod = (containerId: string, createdAt = 2): AttachmentRecord => ({
  ...attachmentRecord({ createdAt, endpointId: `ep-${containerId}` }),
  containerId,
});
const missing = (record: AttachmentRecord): PodVerdict => ({ record, problem: 'endpoint-missing' });
const report = (r: AttachmentRecord, outcome: RepairOutcome): PodRepair => ({
  attachment: `${r.containerId}@${r.ifname}`,
  endpoint: r.endpoint.id,
  outcome,
});

/** Runs `passes` passes of one network whose pods `outcome` repairs; the pass numbers each pod was attempted at. */
function run(
  passes: number,
  pods: () => AttachmentRecord[],
  outcome: (r: AttachmentRecord, pass: number) => RepairOutcome,
): Map<string, number[]> {
  const b = new RepairBackoff();
  const attempts = new Map<string, number[]>();
  for (let pass = 0; pass < passes; pass++) {
    const due = b.admit(NET, pods().map(missing));
    for (const v of due) attempts.set(v.record.containerId, [...(attempts.get(v.record.containerId) ?? []), pass]);
    b.note(
      NET,
      due,
      due.map((v) => report(v.record, outcome(v.record, pass))),
    );
  }
  return attempts;
}

describe('the repair back-off', () => {
  it('a pod HNS always refuses is attempted at passes 0, 2, 5, 10, 19, 36, … (6 of 40), then every MAX_SKIPPED + 1', () => {
    const refused = run(
      40,
      () => [pod('p')],
      () => 'hns-refused',
    );
    expect(refused.get('p')).toEqual([0, 2, 5, 10, 19, 36]);
    const longer = run(
      200,
      () => [pod('p')],
      () => 'hns-refused',
    ).get('p')!;
    expect(longer[longer.length - 1]! - longer[longer.length - 2]!).toBe(MAX_SKIPPED + 1);
  });

  // Every outcome, so that a new one must be placed (a Record of all of them): what says something of the pod backs
  // off; HNS not answering, a DEL meanwhile and a success do not.
  const ATTEMPTS_IN_40: Record<RepairOutcome, number> = {
    repaired: 40,
    'namespace-gone': 6,
    'container-gone': 6,
    'network-gone': 6,
    'no-recorded-spec': 6,
    'deleted-meanwhile': 40,
    'attached-elsewhere': 6,
    'hns-refused': 6,
    'hns-unreachable': 40,
    'hns-failed': 6,
  };
  it.each(Object.entries(ATTEMPTS_IN_40))(
    'a pod whose repair ends %s is attempted %i times in 40 passes',
    (o, times) => {
      const outcome = o as RepairOutcome;
      expect(
        run(
          40,
          () => [pod('p')],
          () => outcome,
        ).get('p'),
      ).toHaveLength(times);
    },
  );

  it('a pod that becomes repairable is repaired once its back-off runs out, and starts again from nothing', () => {
    // Refused until pass 12 (its address freed then); then, at pass 30, it fails once more.
    let healthy = false;
    const b = new RepairBackoff();
    const attempts: number[] = [];
    for (let pass = 0; pass < 40; pass++) {
      if (pass === 30) healthy = false;
      const due = b.admit(NET, healthy ? [] : [missing(pod('p'))]);
      if (due.length === 0) continue;
      attempts.push(pass);
      const repaired = pass >= 12 && pass < 30;
      b.note(NET, due, [report(pod('p'), repaired ? 'repaired' : 'hns-refused')]);
      if (repaired) healthy = true;
      expect(b.of(NET, 'p@eth0')).toEqual(
        repaired ? undefined : expect.objectContaining({ lastOutcome: 'hns-refused' }),
      );
    }
    // Passes 0, 2, 5, 10 refused; 19 repaired (the first attempt after its address was freed); 30 is a fresh start.
    expect(attempts).toEqual([0, 2, 5, 10, 19, 30, 32, 35]);
  });

  it('a pod whose record changes (a new ADD of it) is attempted at the next pass, whatever its back-off', () => {
    let createdAt = 2;
    const attempts = run(
      40,
      () => [pod('p', createdAt)],
      (_r, pass) => {
        if (pass === 10) createdAt = 3;
        return 'hns-refused';
      },
    ).get('p');
    expect(attempts).toEqual([0, 2, 5, 10, 11, 13, 16, 21, 30]);
  });
});

describe('the node agent with the back-off', () => {
  it('attempts a refused pod 5 times in 20 passes, still names it with its back-off, and repairs the pod that heals', async () => {
    const records = [pod('refused'), pod('heals')];
    let listings = 0;
    let healed = false;
    const attempts: string[] = [];
    const healedEp = { id: 'ep-heals', name: 'ep', networkId: 'n', ips: [] };
    const api = { listEndpoints: async () => (listings++, healed ? [healedEp] : []) } as unknown as HnsApi;
    const conf = { name: 'cbr0', stateDir: '/state', audit: false, repair: true, auditIntervalSeconds: 3600 };
    const runtime = {
      servedContexts: () => [{ conf: conf as unknown as NetConf, ipam: { configured: false } as IpamClient }],
      store: () => ({ snapshot: () => ({ attachments: records, tombstones: [] }) }),
      api: async () => ({ api, version: 2, reason: 'test' }),
      hcn: () => ({ enumerateNetworks: async () => undefined }),
    } as unknown as PluginDeps;
    const repair = async (_s: unknown, due: readonly PodVerdict[]): Promise<PodRepair[]> =>
      due.map((v) => {
        attempts.push(v.record.containerId);
        // The second pod's address is freed after the agent's tenth pass: repaired, its endpoint is back.
        const heals = v.record.containerId === 'heals' && listings > 10;
        if (heals) healed = true;
        return report(v.record, heals ? 'repaired' : 'hns-refused');
      });
    const health = new HnsHealth();
    const agent = new NodeAgent({
      ...agentParts(runtime),
      log: silentLogger,
      probeMs: 0,
      tickMs: 3_600_000,
      health,
      repair,
    });
    try {
      agent.start();
      // Each return of HNS runs one pass at once (hns-health.ts): 20 passes, one after the other.
      for (let pass = 1; pass <= 20; pass++) {
        health.failing();
        health.answered();
        await until(() => (listings >= pass ? true : undefined), 5_000, `pass ${pass}`);
      }
      await until(() => (attempts.includes('heals') && listings >= 20 ? true : undefined), 5_000, 'the passes');
      await agent.stop();
      expect(attempts.filter((a) => a === 'refused')).toHaveLength(5);
      // Refused at passes 1, 3, 6 and 11 (after its address was freed at 10): repaired at 11, not tried again.
      expect(attempts.filter((a) => a === 'heals')).toHaveLength(4);
      // The refused pod is still named, with its back-off; the healed one is healthy.
      const net = agent.status().health[0]!;
      expect(net.counts).toMatchObject({ healthy: 1, 'endpoint-missing': 1 });
      expect(net.unhealthy).toEqual([
        {
          attachment: 'refused@eth0',
          problem: 'endpoint-missing',
          detail: 'endpoint ep-refused is missing from HNS',
          repairBackoff: { failures: 5, passesLeft: 16, lastOutcome: 'hns-refused' },
        },
      ]);
    } finally {
      await agent.stop();
    }
  });
});

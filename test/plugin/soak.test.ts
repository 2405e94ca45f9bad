/**
 * The plugin's soak: 200 pod lifecycles (ADD then DEL; a failed ADD is followed by DEL, a failed DEL is retried, as
 * runtimes do), 8 at a time, against a simulator that fails, lies ("not found" for an endpoint it keeps), refuses
 * and delays calls at random (seeded), and restarts once in the middle. In process (runCni's dispatcher with the
 * real handlers and the real host-local IPAM), so it takes seconds, not minutes.
 *
 * Checked DURING the run, at every IPAM release: HNS shows no endpoint holding the address being released (the
 * IPAM client is wrapped; it lists HNS before letting host-local free the address). Checked at the END: nothing
 * leaked — no endpoint of ours in HNS, no address held, no attachment or intent left, no IP still kept back.
 */
import * as fs from 'fs';
import * as path from 'path';
import { dispatch } from '../../src/cni/dispatch';
import { createIpamClient, type IpamOptions } from '../../src/cni/ipam';
import type { Attachment, IpamClient } from '../../src/cni/types';
import { HR } from '../../src/hns/hresults';
import { silentLogger } from '../../src/log/logger';
import { createHandlers } from '../../src/plugin/handlers';
import type { SimOp } from '../../src/sim';
import { bridgeConf, cniEnv, useHarness, type CniCall, type Harness } from '../helpers/cni-harness';
import { DETACH_OP, heldIps, hostLocal, newNamespace, recordFiles } from './support';
import { seededRandom as rng } from '../../src/sim/rng';

const LIFECYCLES = 200;
const PARALLEL = 8;
const RESTART_AT = 100;

let h: Harness;
useHarness(undefined, (x) => (h = x));

const FAULTS: Array<[SimOp, number]> = [
  ['HcnDeleteEndpoint', HR.ERROR_NOT_FOUND], // a "not found" that lies
  ['HcnDeleteEndpoint', HR.ADAPTER_NOT_FOUND], // a refusal
  ['HcnDeleteEndpoint', HR.E_FAIL],
  ['HcnModifyNamespace', HR.ERROR_NOT_FOUND],
  ['HcnModifyNamespace', HR.E_FAIL],
  [DETACH_OP, HR.ERROR_NOT_FOUND], // a DEL's detach
  [DETACH_OP, HR.E_FAIL],
  ['HcnCreateEndpoint', HR.E_FAIL],
  ['HNSCall GET /endpoints', HR.E_FAIL], // the listing that confirms a delete
];

it(`${LIFECYCLES} lifecycles, ${PARALLEL} in parallel, random faults and an HNS restart: no IP freed under a live endpoint, nothing leaked`, async () => {
  const random = rng(10);
  const violations: string[] = [];
  let releases = 0;
  const conf = bridgeConf({ cniVersion: '1.1.0', ipam: hostLocal(h, '10.244.1.0/24'), hnsTimeoutSeconds: 10 });

  // Every release: which addresses does the owner hold, and does HNS show an endpoint with one of them?
  const guard = async (containerId: string) => {
    const held = Object.entries(heldIps(h, 'cbr0'))
      .filter(([, owner]) => owner === containerId)
      .map(([ip]) => ip);
    if (held.length === 0) return;
    const dump = await h.sim.control.dump();
    for (const ep of dump.endpoints) {
      const text = JSON.stringify(ep);
      for (const ip of held)
        if (text.includes(`"${ip}"`))
          violations.push(`${containerId}: released ${ip} while HNS shows endpoint ${ep.ID} (${ep.Name})`);
    }
    releases++;
  };
  const ipamFactory = (o: IpamOptions): IpamClient => {
    const real = createIpamClient(o);
    return {
      get configured() {
        return real.configured;
      },
      get type() {
        return real.type;
      },
      installed: () => real.installed(),
      add: () => real.add(),
      check: () => real.check(),
      gc: () => real.gc(),
      status: () => real.status(),
      del: async () => {
        await guard(o.env.CNI_CONTAINERID ?? '');
        return real.del();
      },
      delFor: async (a: Attachment) => {
        await guard(a.containerId);
        return real.delFor(a);
      },
    };
  };
  const handlers = createHandlers(h.deps);
  const call = async (c: CniCall) => {
    const out = await dispatch(
      { env: cniEnv(h, c), stdin: Buffer.from(JSON.stringify({ stateDir: h.stateDir, ...c.conf })) },
      {
        handlers,
        platform: 'linux',
        defaults: { stateDir: h.stateDir },
        createLogger: () => silentLogger,
        ipamFactory,
      },
    );
    return {
      exitCode: out.exitCode,
      json: out.stdout ? (JSON.parse(out.stdout) as Record<string, unknown>) : undefined,
    };
  };

  const outcomes = { addOk: 0, addFailed: 0, delRetries: 0, faults: 0 };
  const codes = new Map<number, number>();
  let next = 0;
  let restarted = false;
  const lifecycle = async (i: number) => {
    if (i === RESTART_AT && !restarted) {
      restarted = true;
      await h.sim.control.restart({ downMs: 200 });
    }
    if (random() < 0.6) {
      const [op, hr] = FAULTS[Math.floor(random() * FAULTS.length)]!;
      await h.sim.control.failCall(op, hr, { nth: 1 + Math.floor(random() * 4) });
      outcomes.faults++;
    }
    if (random() < 0.1) await h.sim.control.setLatency('HcnCreateEndpoint', Math.floor(random() * 30));
    const containerId = `soak-${i}`;
    const netns = await newNamespace(h).catch(() => '5f0e7a3c-1b2d-4c5e-8f90-123456789abc');
    const add = await call({ verb: 'ADD', conf, containerId, netns });
    if (add.exitCode === 0) {
      outcomes.addOk++;
    } else {
      outcomes.addFailed++;
      const code = Number(add.json?.code);
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    // The runtime DELs after a failed ADD too, and retries a DEL until it succeeds.
    for (let attempt = 0; ; attempt++) {
      const del = await call({ verb: 'DEL', conf, containerId, netns });
      if (del.exitCode === 0) break;
      outcomes.delRetries++;
      if (attempt >= 20) throw new Error(`DEL of ${containerId} never succeeded: ${JSON.stringify(del.json)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      for (let i = next++; i < LIFECYCLES; i = next++) await lifecycle(i);
    }),
  );

  // Faults off; one more pod's ADD and DEL, with the whole-node audit due (as it is once auditIntervalSeconds has
  // passed), finish what refused deletes left (and release the addresses they kept).
  await h.sim.control.reset({ objects: false });
  const due = { ...conf, auditIntervalSeconds: 0 };
  for (let round = 0; round < 2; round++) {
    const ns = await newNamespace(h);
    expect((await call({ verb: 'ADD', conf: due, containerId: `final-${round}`, netns: ns })).exitCode).toBe(0);
    expect((await call({ verb: 'DEL', conf: due, containerId: `final-${round}`, netns: ns })).exitCode).toBe(0);
  }

  console.log(`soak: ${JSON.stringify({ ...outcomes, releases, addFailureCodes: Object.fromEntries(codes) })}`);
  expect(violations).toEqual([]);
  expect(restarted).toBe(true);
  expect(outcomes.addOk).toBeGreaterThan(LIFECYCLES / 2);
  expect(outcomes.addFailed).toBeGreaterThan(0); // the faults did bite
  const dump = await h.sim.control.dump();
  expect(dump.endpoints.map((e) => e.Name)).toEqual([]);
  expect(heldIps(h, 'cbr0')).toEqual({});
  expect(recordFiles(h, 'attachments')).toEqual([]);
  expect(recordFiles(h, 'intents').filter((n) => n.endsWith('.json'))).toEqual([]);
  expect(recordFiles(h, 'quarantine')).toEqual([]);
  for (const t of recordFiles(h, 'tombstones')) {
    expect(JSON.parse(fs.readFileSync(path.join(h.stateDir, 'tombstones', t), 'utf8'))).not.toHaveProperty(
      'ipamPending',
    );
  }
}, 600_000);

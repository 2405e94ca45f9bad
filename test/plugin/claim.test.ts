/**
 * The claim lifecycle an ADD (and a repair) runs through (src/plugin/claim.ts): the intent's deadline, an intent that
 * follows the id HNS really gave (node-wide too, so another state directory's audit judges the current plan), and a
 * commit whose intent another attempt of the same pod took over. Real state stores and a real claims register; HNS
 * is a listing the test writes.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CniCode, CniError } from '../../src/cni/cni-error';
import type { NetConf } from '../../src/cni/types';
import type { EndpointInfo, HnsApi, NetworkInfo } from '../../src/hns/api';
import { hostOs } from '../../src/hns/host-os';
import { silentLogger } from '../../src/log/logger';
import { audit } from '../../src/orphans/audit';
import { endpointName, nicNetworkName } from '../../src/orphans/ownership';
import { commit, keepClaim, updateIntent, writeIntent, type ClaimContext } from '../../src/plugin/claim';
import type { PluginDeps } from '../../src/plugin/deps';
import { Undo } from '../../src/plugin/undo';
import { intentLiveness } from '../../src/state/liveness';
import { ClaimRegistry } from '../../src/state/claims';
import { StateStore } from '../../src/state/store';
import { attachmentRecord, OWNER } from '../helpers/state-records';

let tmp: string;
let clock: number;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-claim-life-'));
  clock = 1_000_000;
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

const hns = hostOs();
const registry = () => new ClaimRegistry(path.join(tmp, 'claims'));
const storeIn = (name: string) =>
  new StateStore(path.join(tmp, name), { os: hns, now: () => clock, registry: registry() });

function context(store: StateStore, conf: Partial<NetConf> = {}): ClaimContext {
  const deps = { now: () => clock, pid: process.pid, hns: { os: () => hns } } as unknown as PluginDeps;
  const full = { name: 'cbr0', hnsTimeoutSeconds: 10, ipamTimeoutSeconds: 30, ...conf } as NetConf;
  return { plan: { conf: full, owner: OWNER }, deps, log: silentLogger, store, undo: new Undo() };
}

/** HNS listing these objects; deletes are not expected (the audits here are dry runs). */
function listing(endpoints: EndpointInfo[], networks: NetworkInfo[] = []): HnsApi {
  return { listEndpoints: async () => endpoints, listNetworks: async () => networks } as unknown as HnsApi;
}

/** What an audit of `store`'s directory (dry run) says of each listed object, by id. */
async function verdicts(store: StateStore, api: HnsApi): Promise<Record<string, string>> {
  const report = await audit({
    api,
    store,
    os: hns,
    log: silentLogger,
    now: () => clock,
    graceMs: 60_000,
    dryRun: true,
  });
  return Object.fromEntries(report.plan.judged.map((j) => [j.id, j.verdict]));
}

it("an intent's deadline covers its ADD's IPAM waits: an ADD waiting on a slow IPAM is live to every audit", async () => {
  const store = storeIn('state');
  const ctx = context(store, { hnsTimeoutSeconds: 5, ipamTimeoutSeconds: 300 });
  const intent = await writeIntent(ctx, [{ kind: 'endpoint', name: endpointName(OWNER), id: 'ep-1' }]);
  // Up to 8 HNS calls and 2 IPAM calls, each within its timeout, and a minute.
  expect(intent.deadline - intent.createdAt).toBe(8 * 5_000 + 2 * 300_000 + 60_000);
  // Eight HNS calls done, and both IPAM calls still within ipamTimeoutSeconds: the intent is live.
  const waiting = intent.createdAt + 8 * 5_000 + 2 * 300_000 - 1;
  expect(intentLiveness(intent, undefined, waiting, hns.processStartTime).live).toBe(true);
  clock = waiting;
  expect(await verdicts(store, listing([{ id: 'ep-1', name: endpointName(OWNER), networkId: 'n', ips: [] }]))).toEqual({
    'ep-1': 'in-flight',
  });
});

it('when HNS gives an object another id, the intent and its node-wide claim claim the id HNS gave: every audit judges it in-flight', async () => {
  const store = storeIn('state');
  const ctx = context(store);
  const name = endpointName(OWNER);
  const intent = await writeIntent(ctx, [{ kind: 'endpoint', name, id: 'id-asked-for' }]);
  const kept = await keepClaim(ctx, intent, { kind: 'endpoint', planned: 'id-asked-for', actual: 'ID-HNS-GAVE' });
  expect(kept.planned).toEqual([{ kind: 'endpoint', name, id: 'ID-HNS-GAVE' }]);
  expect(store.getIntent(OWNER)?.planned).toEqual(kept.planned);
  const given = listing([{ id: 'ID-HNS-GAVE', name, networkId: 'n', ips: [] }]);
  // This state directory's audit, and another one's (it knows the ADD only by the node-wide claim).
  expect(await verdicts(store, given)).toEqual({ 'ID-HNS-GAVE': 'in-flight' });
  expect(await verdicts(storeIn('other-state'), given)).toEqual({ 'ID-HNS-GAVE': 'in-flight' });
});

it("every rewrite of an intent is registered node-wide: another state directory's audit keeps the NIC network a running ADD planned later", async () => {
  const store = storeIn('state');
  const ctx = context(store);
  const intent = await writeIntent(ctx, [{ kind: 'endpoint', name: endpointName(OWNER), id: 'ep-1' }]);
  // IPAM named the MAC: the NIC network is now known, and the intent rewritten to plan it.
  const network = { kind: 'network' as const, name: nicNetworkName(OWNER), id: 'nic-net' };
  await updateIntent(ctx, intent, [...intent.planned, network]);
  const nic: NetworkInfo = { id: 'nic-net', name: network.name, type: 'Transparent', flags: 0, subnets: [] };
  expect(await verdicts(storeIn('other-state'), listing([], [nic]))).toEqual({ 'nic-net': 'in-flight' });
});

it('a commit whose intent another attempt of the same pod took over (its claim had expired) fails with code 11 and rolls back', async () => {
  const store = storeIn('state');
  const first = context(store);
  const intent = await writeIntent(first, [{ kind: 'endpoint', name: endpointName(OWNER), id: 'ep-first' }]);
  const undone: string[] = [];
  first.undo.push('delete the endpoint', async () => void undone.push('ep-first'));
  // The first attempt ran past its deadline; a new ADD of the same pod takes over.
  clock = intent.deadline + 1;
  const second = context(store);
  const next = await writeIntent(second, [{ kind: 'endpoint', name: endpointName(OWNER), id: 'ep-second' }]);
  clock = next.createdAt + 1;
  const record = attachmentRecord({ endpointId: 'ep-first' });
  const failed = await commit(first, record, intent).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(failed).toBeInstanceOf(CniError);
  expect((failed as CniError).code).toBe(CniCode.TRY_AGAIN_LATER);
  expect(store.getAttachment(OWNER)).toBeUndefined();
  expect(store.getIntent(OWNER)?.id).toBe(next.id);
  await first.undo.run(silentLogger);
  expect(undone).toEqual(['ep-first']);
  // The intent of the attempt that took over is untouched by the first one's roll-back.
  expect(store.getIntent(OWNER)?.id).toBe(next.id);
});

it('an intent rewrite after a DEL voided the intent (or another ADD replaced it) fails with code 11: the ADD rolls back, it does not go on', async () => {
  const store = storeIn('state');
  const ctx = context(store);
  const intent = await writeIntent(ctx, [{ kind: 'endpoint', name: endpointName(OWNER), id: 'ep-1' }]);
  // The runtime's DEL of the pod ran meanwhile: its tombstone voids the intent.
  await store.tombstone(OWNER, 'DEL');
  const network = { kind: 'network' as const, name: nicNetworkName(OWNER), id: 'nic-net' };
  const failed = await updateIntent(ctx, intent, [...intent.planned, network]).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(failed).toBeInstanceOf(CniError);
  expect((failed as CniError).code).toBe(CniCode.TRY_AGAIN_LATER);
  expect(store.getIntent(OWNER)?.planned ?? []).not.toContainEqual(network);
});

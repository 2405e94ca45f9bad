/**
 * A DEL through the service releases an address without listing the node (src/plugin/address-book.ts), and still
 * never while another endpoint holds it: a foreign endpoint on another network over the same subnet is known from
 * the node agent's listing; one in the pod's own network is refused by HNS whether or not any listing saw it
 * (HCN_E_ADDR_INVALID_OR_RESERVED), so no address is ever on two live endpoints; and before the service has any
 * listing, the DEL lists, as the standalone executable does.
 */
import type { Hcn } from '../../src/hns/hcn';
import { HR } from '../../src/hns/hresults';
import { bridgeConf, useHarness, type Harness } from '../helpers/cni-harness';
import { createEndpointV2, createNetworkV2, expectNoAddressTwice } from '../migration/support';
import { heldIps, hostLocal, lastSeq, newNamespace, until } from '../plugin/support';
import {
  auditedVisitOver,
  makeBin,
  SERVICE_DEL_OPS,
  startServiceProcess,
  viaShim,
  type Bin,
  type RunningService,
} from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

let bin: Bin;
let service: RunningService | undefined;
beforeEach(() => {
  bin = makeBin(h);
});
afterEach(async () => {
  await service?.stop();
  service = undefined;
});

const hcn = (): Hcn => h.deps.hns.hcn({ hnsTimeoutSeconds: 10 });
const V2 = { Major: 2, Minor: 0 };

function runner(conf: Record<string, unknown>) {
  return async (verb: 'ADD' | 'DEL', containerId: string, netns: string) => {
    const out = await viaShim(h, bin, service!.address, { verb, conf, containerId, netns });
    return { ...out, ip: out.exitCode === 0 && verb === 'ADD' ? ipOf(out.stdout) : undefined };
  };
}

function ipOf(stdout: string): string {
  return (JSON.parse(stdout) as { ips: Array<{ address: string }> }).ips[0]!.address.split('/')[0]!;
}

/** Waits for the node agent to finish a whole-node listing that began after now. */
async function aListingFromNow(): Promise<void> {
  const audits = (await service!.status()).agent.audits;
  await until(
    async () => ((await service!.status()).agent.audits >= audits + 2 ? true : undefined),
    20_000,
    'a listing that began after now',
  );
}

it("keeps the address a foreign endpoint on another network holds, as the node agent's listing shows it; released once that endpoint is gone", async () => {
  service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '0']);
  const run = runner(bridgeConf({ ipam: hostLocal(h), auditIntervalSeconds: 1 }));
  const ns = await newNamespace(h);
  const ours = await run('ADD', 'ours', ns);
  expect(ours.exitCode).toBe(0);
  const ip = ours.ip!;
  // Another plugin's endpoint with that address, on a network of its own over the same subnet (HNS allows it there).
  const other = await createNetworkV2(h, {
    SchemaVersion: V2,
    Name: 'other',
    Type: 'L2Bridge',
    Ipams: [{ Type: 'Static', Subnets: [{ IpAddressPrefix: '10.244.1.0/24' }] }],
  });
  const foreign = await createEndpointV2(h, other, {
    SchemaVersion: V2,
    Name: 'someone-else',
    IpConfigurations: [{ IpAddress: ip }],
  });
  await aListingFromNow();
  expect((await run('DEL', 'ours', ns)).exitCode).toBe(0);
  expect(heldIps(h, 'cbr0')[ip]).toBe('ours');
  // The next pod gets another address: the foreign endpoint's is not handed out.
  const next = await run('ADD', 'next', await newNamespace(h));
  expect(next.exitCode).toBe(0);
  expect(next.ip).not.toBe(ip);
  await expectNoAddressTwice(h, 'after the next pod');
  // Once the foreign endpoint is gone, the node agent's next audit releases it.
  await hcn().deleteEndpoint(foreign);
  await until(() => (heldIps(h, 'cbr0')[ip] === undefined ? true : undefined), 20_000, 'the address to be released');
});

it("never puts an address on two live endpoints in the pod's network, even one no listing saw: HNS refuses the second holder", async () => {
  service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '0']);
  const X = '10.244.1.77';
  const run = runner(
    bridgeConf({
      auditIntervalSeconds: 3600,
      ipam: { type: 'static', addresses: [{ address: `${X}/24`, gateway: '10.244.1.1' }] },
    }),
  );
  const ns = await newNamespace(h);
  expect((await run('ADD', 'a', ns)).exitCode).toBe(0);
  await auditedVisitOver(service);
  const net = (await h.sim.control.dump()).networks[0]!.ID;
  const take = () =>
    createEndpointV2(h, net, { SchemaVersion: V2, Name: 'someone-else', IpConfigurations: [{ IpAddress: X }] });
  // While the pod holds it, another plugin cannot take it in this network.
  await expect(take()).rejects.toMatchObject({ hresult: HR.ADDR_INVALID_OR_RESERVED });
  const pid = service.child.pid;
  const seq = await lastSeq(h);
  expect((await run('DEL', 'a', ns)).exitCode).toBe(0);
  const ops = (await h.sim.control.calls()).filter((c) => c.seq > seq && c.pid === pid).map((c) => c.op);
  expect(ops).toEqual(SERVICE_DEL_OPS);
  // Released; another plugin takes it after the last listing, unseen by the service; the next pod asks for it.
  const foreign = await take();
  const b = await run('ADD', 'b', await newNamespace(h));
  expect(b.exitCode).not.toBe(0);
  const live = (await h.sim.control.dump()).endpoints;
  expect(live.map((e) => e.ID.toLowerCase())).toEqual([foreign.toLowerCase()]);
  await expectNoAddressTwice(h, 'after the refused ADD');
});

it('lists the endpoints before releasing an address while the service has no listing of its own (audit off)', async () => {
  service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '0']);
  const run = runner(bridgeConf({ ipam: hostLocal(h), audit: false }));
  const ns = await newNamespace(h);
  expect((await run('ADD', 'a', ns)).exitCode).toBe(0);
  const pid = service.child.pid;
  const seq = await lastSeq(h);
  expect((await run('DEL', 'a', ns)).exitCode).toBe(0);
  const ops = (await h.sim.control.calls()).filter((c) => c.seq > seq && c.pid === pid).map((c) => c.op);
  expect(ops).toEqual([...SERVICE_DEL_OPS, 'HNSCall GET /endpoints']);
  expect(heldIps(h, 'cbr0')).toEqual({});
});

it('lists before releasing once the operator turned the audit off, though the book still holds the listing it took while it was on', async () => {
  service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '0']);
  const on = bridgeConf({ ipam: hostLocal(h), auditIntervalSeconds: 3600 });
  const ns = await newNamespace(h);
  const ours = await runner(on)('ADD', 'ours', ns);
  expect(ours.exitCode).toBe(0);
  // The node agent's one listing for an hour; then the audit is turned off and no node agent lists again.
  await until(async () => ((await service!.status()).agent.audits >= 1 ? true : undefined), 20_000, 'a listing');
  // After it, another plugin's endpoint takes the pod's address on a network of its own over the same subnet.
  const other = await createNetworkV2(h, {
    SchemaVersion: V2,
    Name: 'other',
    Type: 'L2Bridge',
    Ipams: [{ Type: 'Static', Subnets: [{ IpAddressPrefix: '10.244.1.0/24' }] }],
  });
  await createEndpointV2(h, other, {
    SchemaVersion: V2,
    Name: 'someone-else',
    IpConfigurations: [{ IpAddress: ours.ip }],
  });
  expect((await runner({ ...on, audit: false })('DEL', 'ours', ns)).exitCode).toBe(0);
  expect(heldIps(h, 'cbr0')[ours.ip!]).toBe('ours');
});

/**
 * The second half of every ADD, whatever the mode: in the network the mode chose, create the endpoint the intent
 * planned (place), build the record and its CNI result, and attach the endpoint where the netns says (attach); the
 * commit (claim.ts) then puts the record in place of the intent.
 */
import { CniCode, CniError } from '../cni/cni-error';
import type { IpConfig } from '../cni/types';
import { sameId, type EndpointInfo, type EndpointSpec, type NetworkInfo } from '../hns/api';
import { hasCode, hcnCause } from '../hns/hcn-error';
import { HR } from '../hns/hresults';
import { loopbackDsr } from '../hns/policies';
import { deleteConfirmed } from '../hns/teardown';
import { canonicalIp } from '../net/addr';
import { contains, defaultRoute, familyOf, splitCidr } from '../net/ipv4';
import type { AttachmentRecord, IntentRecord } from '../state/records';
import type { PreparedRecord } from '../state/store';
import type { AddRun } from './add-steps';
import type { Addressing, EndpointPlacement, Placed, PlannedEndpoint } from './add-steps';
import { keepClaim } from './claim';
import { detach, ensureAttached } from './attach';
import { podDns, podPolicies } from './endpoint-config';
import { step } from './to-cni-error';
import { buildResult } from './result';

/** Creates the endpoint the intent planned where the mode says; the claim follows the id HNS gave it. */
export async function placeEndpoint(
  a: AddRun,
  addr: Addressing,
  intent: IntentRecord,
  where: EndpointPlacement,
): Promise<Placed> {
  const planned = planEndpoint(a, addr, intent, where);
  const ep = await createEndpoint(a, where.network, planned);
  const claim = await keepClaim(a, intent, { kind: 'endpoint', planned: planned.id, actual: ep.id });
  const endpoint =
    a.plan.conf.loopbackDSR && !planned.ipv4 && planned.families.has(4)
      ? await addLoopbackDsr(a, ep, planned)
      : planned;
  return { where, endpoint, ep, intent: claim };
}

function planEndpoint(a: AddRun, addr: Addressing, intent: IntentRecord, where: EndpointPlacement): PlannedEndpoint {
  const { conf } = a.plan;
  const dns = podDns(conf, a.plan.attachment.args, addr.dns);
  const { name, id } = intent.planned.find((p) => p.kind === 'endpoint')!;
  const ips = addr.ips.map((ip) => splitCidr(ip.address)!).map((s) => ({ address: s.ip, prefixLength: s.prefix }));
  // Families: the addresses IPAM gave, or (HNS assigns) one per subnet of the network.
  const families = new Set(
    ips.length ? ips.map((ip) => familyOf(ip.address)!) : where.subnets.map((s) => familyOf(s.prefix)!),
  );
  // A network that shows no subnets (HNS decides): IPv4, as before dual-stack, so port mappings and NAT still apply.
  if (families.size === 0) families.add(4);
  const ipv4 = ips.find((ip) => familyOf(ip.address) === 4)?.address;
  const spec: EndpointSpec = {
    name,
    ips,
    ...(where.mac ? { mac: where.mac } : {}),
    gateways: where.gateways,
    dns: {
      servers: dns.nameservers,
      search: dns.search,
      ...(dns.domain ? { domain: dns.domain } : {}),
      ...(dns.options?.length ? { options: dns.options } : {}),
    },
    policies: podPolicies(where.policies, conf, { families, ipv4 }, a.log),
  };
  return { name, id, spec, families, ipv4, dns };
}

/** Creates the endpoint; the rollback deletes it again. */
async function createEndpoint(a: AddRun, network: NetworkInfo, plan: PlannedEndpoint): Promise<EndpointInfo> {
  const ep = await refusable(`creating endpoint ${plan.name}`, () => createOrRecognise(a, network, plan));
  a.deps.addressBook?.created(ep);
  // A "not found" from HNS is confirmed by a listing before the rollback counts the endpoint as gone: only then may
  // the rollback release its IP (Undo keeps the allocation when this step fails).
  a.undo.push('delete the endpoint', async () => {
    await deleteConfirmed(a.api, 'endpoint', ep.id);
    a.deps.addressBook?.deleted(ep.id);
  });
  return ep;
}

/**
 * A create HNS may have carried out although its answer says it failed: a v1 envelope has no code for most refusals
 * (E_FAIL: microsoft/hcsshim internal/hns/hnsnetwork.go hnsResponse reads only Success and Error), and a connection
 * that breaks once the call is sent leaves RPC_S_CALL_FAILED. Then the endpoint this ADD planned is looked for (by its
 * id, or by its name, which is this attachment's own: the leftovers of earlier attempts were removed before the create,
 * own-objects.ts). Found, it is this create's, and the ADD goes on with it. Not found, the failure stands. Unknown (HNS
 * does not answer the look), the rollback keeps the address: an endpoint may hold it (Undo onlyIfClean).
 */
async function createOrRecognise(a: AddRun, network: NetworkInfo, plan: PlannedEndpoint): Promise<EndpointInfo> {
  try {
    return await a.api.createEndpoint(network, plan.spec, plan.id);
  } catch (e) {
    if (!hasCode(e, HR.E_FAIL) && !hasCode(e, HR.RPC_S_CALL_FAILED)) throw e;
    let made: EndpointInfo | undefined;
    try {
      made = plan.id
        ? await a.api.getEndpoint(plan.id)
        : (await a.api.findEndpoints({ name: plan.name })).find((f) => sameId(f.networkId, network.id));
    } catch {
      a.undo.push('keep the address of an endpoint HNS may have created', () =>
        Promise.reject(new Error(`whether HNS created endpoint ${plan.name} is not known`)),
      );
      throw e;
    }
    if (!made) throw e;
    a.log.warn({ endpoint: made.id, err: (e as Error).message }, 'HNS created the endpoint its answer said it did not');
    return made;
  }
}

/**
 * HNS assigned the IPv4 address: the loopback-DSR policy (OutBoundNAT to the pod's own IP, IPv4 only as in every
 * peer) is added now that it is known, as HCN can modify an endpoint's policies (microsoft/hcsshim
 * hcn/hcnendpoint.go ApplyPolicy). Returns the endpoint as planned with that policy, as repair re-creates it.
 */
async function addLoopbackDsr(a: AddRun, ep: EndpointInfo, planned: PlannedEndpoint): Promise<PlannedEndpoint> {
  const podIp = ep.ips.find((ip) => familyOf(ip.address) === 4)?.address;
  if (!podIp)
    throw new CniError(
      CniCode.HNS_FAILURE,
      `loopbackDSR: HNS created endpoint ${ep.id} without an IPv4 address, so there is no pod IP to loop back to`,
    );
  await step(`adding the loopback DSR policy for ${podIp}`, () =>
    a.api.addEndpointPolicies(ep.id, [loopbackDsr(podIp)]),
  );
  return { ...planned, spec: { ...planned.spec, policies: [...planned.spec.policies, loopbackDsr(podIp)] } };
}

/** The CNI result: the addresses IPAM gave, or those HNS chose, with one default route per family. */
function podResult(a: AddRun, addr: Addressing, placed: Placed) {
  const { where, ep } = placed;
  const { gateways, subnets } = where;
  // Without IPAM, HNS chose the addresses (one per family): report each with its subnet's prefix and gateway.
  const gatewayOf = (family: 4 | 6): string | undefined => gateways.find((g) => familyOf(g) === family);
  const resultIps: IpConfig[] = addr.ips.length
    ? addr.ips
    : ep.ips.map((ip) => {
        const family = familyOf(ip.address) ?? 4;
        const subnet = subnets.find((s) => contains(s.prefix, ip.address));
        const prefix = ip.prefixLength ?? Number(subnet?.prefix.split('/')[1] ?? (family === 4 ? 32 : 128));
        const gw = (family === 4 ? ep.gateway : ep.gateway6) ?? subnet?.gateway ?? gatewayOf(family);
        const address = `${canonicalIp(ip.address)}/${prefix}`;
        return gw ? { address, gateway: gw } : { address };
      });
  // One default route per family the pod has, via that family's gateway (0.0.0.0/0 and ::/0, as sdnbridge).
  const defaults = resultIps.flatMap((ip) => {
    const family = familyOf(ip.address) ?? 4;
    const gw = ip.gateway ?? gatewayOf(family);
    return gw ? [{ dst: defaultRoute(family), gw }] : [];
  });
  return buildResult({
    ifname: a.plan.owner.ifname,
    netns: a.plan.attachment.netns,
    mac: ep.mac ?? where.mac,
    ips: resultIps,
    routes: addr.routes.length ? addr.routes : defaults,
    dns: placed.endpoint.dns,
    ...(a.plan.conf.mtu !== undefined && a.plan.choice.version === 2 ? { mtu: a.plan.conf.mtu } : {}),
  });
}

/** The record that replaces the intent at the commit. */
export function attachmentRecord(a: AddRun, addr: Addressing, placed: Placed): AttachmentRecord {
  const { owner } = a.plan;
  const { where, endpoint: plan, ep } = placed;
  const { network, mac } = where;
  // For repair: the endpoint as HNS has it now (the addresses and MAC it assigned), created again the same way.
  const endpointSpec: EndpointSpec = {
    ...plan.spec,
    ips: ep.ips.map((ip) => ({ ...ip })),
    ...((ep.mac ?? mac) ? { mac: ep.mac ?? mac } : {}),
  };
  const result = podResult(a, addr, placed);
  return {
    kind: 'attachment',
    schema: 1,
    containerId: owner.containerId,
    ifname: owner.ifname,
    netns: a.plan.attachment.netns,
    cniNetwork: a.plan.conf.name,
    mode: where.mode,
    apiVersion: a.plan.choice.version,
    network: { id: network.id, name: network.name, owned: where.networkOwned },
    endpoint: { id: ep.id, name: plan.name, owned: true },
    ...(mac ? { mac } : {}),
    ...(where.adapter ? { adapter: { ...where.adapter } } : {}),
    ipamAllocated: addr.ipamAllocated,
    attach: a.plan.attach,
    result: result as unknown as Record<string, unknown>,
    createdAt: a.deps.now(),
    recreate: {
      endpoint: endpointSpec as unknown as Record<string, unknown>,
      ...(where.networkSpec ? { network: where.networkSpec as unknown as Record<string, unknown> } : {}),
    },
  };
}

/**
 * The attach step. Everything the record says is known before the attach: its file is written now and fsynced while
 * HNS attaches (the fsync used to follow the attach); it becomes the record only at the commit (claim.ts), after a
 * successful attach.
 */
export async function attachEndpoint(a: AddRun, ep: EndpointInfo, record: AttachmentRecord): Promise<PreparedRecord> {
  const prepared = await step('writing the attachment record', async () => a.store.prepareAttachment(record));
  try {
    await step(`attaching endpoint ${record.endpoint.name}`, () =>
      ensureAttached(a.api, ep, a.plan.attach, { fresh: true }),
    );
  } catch (e) {
    await prepared.discard();
    throw e;
  }
  a.undo.push('detach the endpoint', () => detach(a.api, ep.id, a.plan.attach));
  return prepared;
}

/**
 * The failure of a step before anything of the attachment was created in HNS (the endpoint's create HNS refused, or
 * a read before it): the create made nothing, so the caller may remove the cause and try again (bridge.ts). To
 * everything else it is the CNI error the step failed with.
 */
export class RefusedCreate extends CniError {
  constructor(e: CniError) {
    super(e.code, e.message, e.details, { cause: e.cause });
  }
}

/** Runs a step before anything of the attachment is created in HNS: its failure is a RefusedCreate. */
export async function refusable<T>(what: string, create: () => Promise<T>): Promise<T> {
  try {
    return await step(what, create);
  } catch (e) {
    throw e instanceof CniError ? new RefusedCreate(e) : e;
  }
}

/** HNS's error when `e` is a RefusedCreate, else undefined. */
export function refusedCreate(e: unknown): unknown {
  return e instanceof RefusedCreate ? hcnCause(e) : undefined;
}

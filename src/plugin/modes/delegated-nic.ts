/**
 * Delegated-NIC mode: the pod gets a host NIC of its own. Per attachment, one Transparent network bound to the
 * physical adapter with the pod's NIC MAC, flagged as Azure CNI flags FrontendNIC networks (non-persistent, so a
 * reboot clears it; DisableHostPort where HNS has it; EnableIov with `iov`: endpoint-config.ts nicNetworkFlags), and
 * one endpoint in it.
 *
 * This is where seed 000 bites: an ADD killed during HcnCreateNetwork leaves HNS to finish a network nobody
 * recorded, holding the NIC. The ADD looks the adapter up here, audits a network of ours that holds it (removing it
 * when it is a leak), and otherwise says precisely who holds it.
 */
import { CniCode, CniError } from '../../cni/cni-error';
import { sameId, type HnsApi, type NetworkInfo, type NetworkSpec } from '../../hns/api';
import { hcnCause, isAdapterUnavailable, isAlreadyExists } from '../../hns/hcn-error';
import type { HostAdapter } from '../../hns/hcn';
import { NetworkFlags } from '../../hns/schema';
import type { SubnetInfo } from '../../hns/api';
import { familyOf, firstHost, networkOf } from '../../net/ipv4';
import { unicastMac } from '../../net/mac';
import { deleteNetworkUnlessHeld } from '../../orphans/network-holders';
import { endpointName, namesOwner, nicNetworkName, parseOwnedName } from '../../orphans/ownership';
import { intentLiveness } from '../../state/liveness';
import {
  ownerKey,
  sameOwner,
  type AttachmentRecord,
  type IntentRecord,
  type PlannedObject,
  type RecordedAdapter,
} from '../../state/records';
import { plannedId } from '../add-plan';
import type { AddMode, AddRun } from '../add-steps';
import type { DelMode, DelPlan } from '../del-steps';
import type { RepairMode } from '../repair-steps';
import { azureNicNetworkName } from '../../orphans/peer-networks';
import { deleteOwnNetwork } from './own-network';
import type { Addressing, Placed } from '../add-steps';
import { keepClaim, updateIntent } from '../claim';
import { placeEndpoint } from '../endpoint';
import { requireIpv6 } from '../families';
import { auditNicHolder } from '../own-objects';
import { nicNetworkFlags } from '../endpoint-config';
import { step } from '../to-cni-error';
import type { StateSnapshot } from '../../state/store';

/**
 * The pod's NIC MAC. Precedence: runtimeConfig.mac (the runtime's "mac" capability, per pod), then CNI_ARGS MAC,
 * then the MAC of the interface in the delegated IPAM result. Two runtime sources that disagree are an error: one
 * of them is wrong, and binding the wrong NIC is worse than failing.
 */
export function runtimeMac(a: { plan: Pick<AddRun['plan'], 'conf' | 'attachment'> }): string | undefined {
  const fromRuntime = a.plan.conf.runtimeMac;
  const argText = a.plan.attachment.args.MAC;
  let fromArgs: string | undefined;
  if (argText !== undefined) {
    fromArgs = unicastMac(argText);
    if (!fromArgs)
      throw new CniError(CniCode.INVALID_ENV, `CNI_ARGS MAC=${JSON.stringify(argText)} is not a unicast MAC address`);
  }
  if (fromRuntime && fromArgs && fromRuntime !== fromArgs) {
    throw new CniError(
      CniCode.INVALID_NETWORK_CONFIG,
      `runtimeConfig.mac ${fromRuntime} and CNI_ARGS MAC ${fromArgs} disagree`,
    );
  }
  return fromRuntime ?? fromArgs;
}

export function chooseMac(a: AddRun, ipamMac: string | undefined): string {
  const mac = runtimeMac(a) ?? (ipamMac !== undefined ? unicastMac(ipamMac) : undefined);
  if (!mac) {
    throw new CniError(
      CniCode.INVALID_NETWORK_CONFIG,
      'delegatedNic mode needs the pod NIC MAC: runtimeConfig.mac (capability "mac"), CNI_ARGS MAC=…, or a MAC in the IPAM result',
    );
  }
  return mac;
}

/**
 * Finds the host adapter with the MAC and makes sure nobody else holds it. A network of ours that holds it is
 * audited on the spot (seed 000's leak is removed here, whatever the rest of the node holds); `ownIntent` is this
 * ADD's, which claims nothing yet.
 */
export async function lookupNic(a: AddRun, mac: string, ownIntent?: string): Promise<HostAdapter> {
  const adapter = await physicalAdapter(a, mac);
  const state = a.store.snapshot();
  const tombs = new Map(state.tombstones.map((t) => [ownerKey(t), t]));
  const live: Liveness = (i) =>
    intentLiveness(i, tombs.get(ownerKey(i)), a.deps.now(), a.deps.hns.os().processStartTime);
  // An ADD of another attachment that is creating a network on this NIC right now (HNS may not show it yet).
  for (const i of state.intents) {
    if (i.mac === mac && !sameOwner(i, a.plan.owner) && live(i).live) {
      throw new CniError(
        CniCode.TRY_AGAIN_LATER,
        `NIC ${mac} is being claimed by a running ADD for ${ownerKey(i)} (pid ${i.pid}); try again later`,
      );
    }
  }
  const networks = await step('listing HNS networks', () => a.api.listNetworks());
  // v1 listings name the NIC in NetworkAdapterName and its MAC in SourceMac (microsoft/hcsshim internal/hns/hnsnetwork.go
  // HNSNetwork), v2 in the NetAdapterName policy (hcn/hcnpolicy.go): either one identifies the holder.
  const holder = networks.find(
    (n) => n.adapterName?.toLowerCase() === adapter.name.toLowerCase() || (!!n.sourceMac && n.sourceMac === mac),
  );
  if (!holder) return adapter;
  const parsed = parseOwnedName(holder.name);
  // Ours, or a peer's the operator lets the audit remove (adopt: peer-networks.ts), is audited here and now.
  if ((parsed || a.plan.conf.adopt.length > 0) && a.plan.conf.audit && (await auditNicHolder(a, holder, ownIntent))) {
    a.log.info({ mac, network: holder.name }, 'the leaked network that held the NIC was removed');
    return adapter;
  }
  throw heldNic(a, { holder, adapter, mac, parsed, state, live });
}

type Liveness = (i: IntentRecord) => ReturnType<typeof intentLiveness>;

/** The network that holds the NIC, and what the state said when the ADD looked. */
interface NicHolder {
  holder: NetworkInfo;
  adapter: HostAdapter;
  mac: string;
  parsed: ReturnType<typeof parseOwnedName>;
  state: StateSnapshot;
  live: Liveness;
}

/** The physical host adapter with the MAC. */
async function physicalAdapter(a: AddRun, mac: string): Promise<HostAdapter> {
  const listed = await step('listing host adapters', () => a.api.listAdapters());
  // Physical adapters only: a host vNIC of an HNS switch ("vEthernet (…)") carries the NIC's MAC, and HNS refuses it
  // as a network's adapter (Azure network/network_windows.go: "the hns calls fails if passed a vSwitch interface").
  const adapters = listed.filter((x) => x.physical !== false && !/^vEthernet \(/i.test(x.name));
  const adapter = adapters.find((x) => x.mac === mac);
  if (!adapter) {
    const seen = adapters.map((x) => `${x.name} (${x.mac})`).join(', ') || 'none';
    const vnic = listed.find((x) => x.mac === mac);
    throw new CniError(
      CniCode.NIC_NOT_FOUND,
      `no physical host adapter has the pod's NIC MAC ${mac}${vnic ? ` (only the host vNIC "${vnic.name}" has it)` : ''}; physical adapters: ${seen}`,
    );
  }
  return adapter;
}

/** Why the NIC cannot be used: the network that holds it, and whose it is as far as the state knows. */
function heldNic(a: AddRun, h: NicHolder): CniError {
  const { holder, parsed, state } = h;
  const where = `NIC ${h.mac} (adapter "${h.adapter.name}")`;
  if (!parsed) {
    return new CniError(
      CniCode.NIC_IN_USE,
      `${where} is bound by HNS network "${holder.name}" (${holder.id}, ${holder.type}), which hcn-cni did not create; remove that network or give the pod another NIC`,
    );
  }
  // The name carries the owner's tag: the state says whose it is.
  const ofHolder = (o: Parameters<typeof namesOwner>[1]) => namesOwner(parsed, o);
  const rec = state.attachments.find(ofHolder);
  if (rec && sameId(rec.network.id, holder.id)) {
    return new CniError(
      CniCode.NIC_IN_USE,
      `${where} is in use by attachment ${ownerKey(rec)} (network "${holder.name}"); DEL that attachment first`,
    );
  }
  // Our own intent claims nothing here: a network of this very owner that is still there is a leftover.
  const intent = ofHolder(a.plan.owner) ? undefined : state.intents.find(ofHolder);
  if (intent && h.live(intent).live) {
    return new CniError(
      CniCode.TRY_AGAIN_LATER,
      `${where} is held by network "${holder.name}", which a running ADD (pid ${intent.pid}) is creating; try again later`,
    );
  }
  const holderOwner = parsed.owner ?? [...state.intents, ...state.tombstones].find(ofHolder);
  return new CniError(
    CniCode.NIC_IN_USE,
    `${where} is held by network "${holder.name}" (${holder.id}) left behind by ${holderOwner ? ownerKey(holderOwner) : `owner tag ${parsed.tag}`}, which has no live attachment: a leaked network${
      a.plan.conf.audit
        ? ' that the audit could not remove (see the log)'
        : ', and the audit is switched off ("audit": false)'
    }`,
  );
}

/** The NIC network's spec, as created (and recorded for repair). */
function nicNetworkSpec(a: AddRun, spec: { name: string; subnets: SubnetInfo[] }, adapter: HostAdapter): NetworkSpec {
  return {
    name: spec.name,
    type: 'Transparent',
    flags: a.plan.nicFlags ?? NetworkFlags.EnableNonPersistent,
    adapterName: adapter.name,
    subnets: spec.subnets,
    policies: [...a.plan.networkPolicies],
  };
}

async function createNicNetwork(
  a: AddRun,
  ownIntent: string,
  spec: { name: string; id?: string; mac: string; subnets: SubnetInfo[] },
  adapter: HostAdapter,
): Promise<{ network: NetworkInfo; spec: NetworkSpec }> {
  for (let attempt = 1; ; attempt++) {
    try {
      const netSpec = nicNetworkSpec(a, spec, adapter);
      const network = await step(`creating HNS network ${spec.name}`, () => a.api.createNetwork(netSpec, spec.id));
      return { network, spec: netSpec };
    } catch (e) {
      const cause = hcnCause(e);
      if (isAdapterUnavailable(cause)) {
        // HNS finished a network on this NIC after we looked (a leaked create committing late): look (which audits
        // the holder) and retry once.
        if (attempt === 1 && a.plan.conf.audit) {
          a.log.warn(
            { mac: spec.mac, adapter: adapter.name },
            'HNS says the NIC is taken although it looked free; looking again',
          );
          adapter = await lookupNic(a, spec.mac, ownIntent);
          continue;
        }
        throw new CniError(
          CniCode.TRY_AGAIN_LATER,
          `HNS reports NIC ${spec.mac} (adapter "${adapter.name}") as taken: a network on it is still being completed; try again later`,
          '',
          { cause },
        );
      }
      if (isAlreadyExists(cause)) {
        throw new CniError(
          CniCode.TRY_AGAIN_LATER,
          `HNS network ${spec.name} already exists or is still being created by an earlier attempt for this pod; try again later (the audit removes it)`,
          '',
          { cause },
        );
      }
      throw e;
    }
  }
}

/** What a delegated-NIC ADD plans before it allocates anything: the endpoint, and the NIC network once the MAC is known. */
export function planDelegated(
  a: AddRun,
  reuse: AttachmentRecord | undefined,
): { planned: PlannedObject[]; mac?: string } {
  const mac = reuse?.mac ?? runtimeMac(a);
  const epId = plannedId(a.plan.choice);
  const netId = plannedId(a.plan.choice);
  const planned: PlannedObject[] = [
    { kind: 'endpoint', name: endpointName(a.plan.owner), ...(epId ? { id: epId } : {}) },
  ];
  if (mac) planned.unshift({ kind: 'network', name: nicNetworkName(a.plan.owner), ...(netId ? { id: netId } : {}) });
  return { planned, ...(mac ? { mac } : {}) };
}

/**
 * The place step of delegated-NIC mode: the attachment's own network on the pod's NIC (or the recorded one that
 * survived), then the endpoint the intent planned in it.
 */
export async function placeOnNic(
  a: AddRun,
  addr: Addressing,
  startIntent: IntentRecord,
  reuse: AttachmentRecord | undefined,
): Promise<Placed> {
  const mac = startIntent.mac ?? chooseMac(a, addr.ipamMac);
  const subnets = nicSubnets(a, addr);
  const netName = nicNetworkName(a.plan.owner);
  // The MAC came from IPAM: now the intent can name the NIC and the network it will create.
  const named = startIntent.mac ? startIntent : await nameNicNetwork(a, startIntent, netName, mac);
  const { network, networkSpec, adapter, intent } = await nicNetwork(a, named, { name: netName, mac, subnets }, reuse);
  return placeEndpoint(a, addr, intent, {
    network,
    networkOwned: true,
    mode: 'delegatedNic',
    subnets,
    gateways: subnets.map((s) => s.gateway).filter((g): g is string => g !== undefined),
    mac,
    ...(networkSpec ? { networkSpec } : {}),
    ...(adapter ? { adapter } : {}),
    policies: a.plan.policies,
  });
}

/** The intent, now naming the NIC and the network this ADD will create on it. */
function nameNicNetwork(a: AddRun, intent: IntentRecord, netName: string, mac: string): Promise<IntentRecord> {
  const netId = plannedId(a.plan.choice);
  return updateIntent(
    a,
    intent,
    [{ kind: 'network', name: netName, ...(netId ? { id: netId } : {}) }, ...intent.planned],
    mac,
  );
}

/** The network's subnets: one per family of the pod's addresses (IPAM), else the configured ones (HNS assigns). */
function nicSubnets(a: AddRun, addr: Addressing): SubnetInfo[] {
  const { conf } = a.plan;
  const subnets: SubnetInfo[] = (
    addr.ips.length
      ? addr.ips.map((ip) => ({ prefix: networkOf(ip.address)!, family: familyOf(ip.address)!, gateway: ip.gateway }))
      : (conf.subnets ?? [])
          .filter((s) => s.prefix)
          .map((s) => ({ prefix: networkOf(s.prefix!)!, family: s.family, gateway: undefined as string | undefined }))
  ).map(({ prefix, family, gateway }) => {
    const gw = gateway ?? conf.subnets?.find((s) => s.family === family)?.gateway ?? firstHost(prefix);
    return gw ? { prefix, gateway: gw } : { prefix };
  });
  if (subnets.length === 0) {
    throw new CniError(
      CniCode.INVALID_NETWORK_CONFIG,
      'delegatedNic mode needs addresses: configure "ipam", or a "subnet" for HNS to assign from',
    );
  }
  const v6 = subnets.find((s) => familyOf(s.prefix) === 6);
  if (v6 && addr.ips.length === 0) requireIpv6(a.plan.choice, `subnet ${v6.prefix}`);
  return subnets;
}

/**
 * A recorded network that survived (only the endpoint is gone) is reused; otherwise the NIC must be free. Returns the
 * intent too, following the id HNS gave the network.
 */
async function nicNetwork(
  a: AddRun,
  intent: IntentRecord,
  want: { name: string; mac: string; subnets: SubnetInfo[] },
  reuse: AttachmentRecord | undefined,
): Promise<{
  network: NetworkInfo;
  networkSpec: NetworkSpec | undefined;
  adapter: RecordedAdapter | undefined;
  intent: IntentRecord;
}> {
  const kept = reuse?.network.owned
    ? await step('looking up the recorded network', () => a.api.getNetwork(reuse.network.id))
    : undefined;
  if (kept) {
    const networkSpec = reuse?.recreate?.network as NetworkSpec | undefined;
    return { network: kept, networkSpec, adapter: reuse?.adapter, intent };
  }
  const adapter = await lookupNic(a, want.mac, intent.id);
  const netId = intent.planned.find((p) => p.kind === 'network')?.id;
  const made = await createNicNetwork(a, intent.id, { ...want, ...(netId ? { id: netId } : {}) }, adapter);
  const created = made.network;
  a.undo.push('delete the network', () => deleteNetworkUnlessHeld(a.api, created.id));
  const claim = await keepClaim(a, intent, { kind: 'network', planned: netId, actual: created.id });
  return { network: created, networkSpec: made.spec, adapter: recordedAdapter(adapter), intent: claim };
}

/** The adapter as the record keeps it. */
export function recordedAdapter(x: HostAdapter): RecordedAdapter {
  return { name: x.name, mac: x.mac, ...(x.interfaceGuid ? { interfaceGuid: x.interfaceGuid } : {}) };
}

/**
 * In delegatedNic mode with the Azure opt-in: the id of Azure's network for the request's NIC (azure-<mac>), on
 * which Azure's endpoint of the pod's delegated NIC is (peer-endpoints.ts). Only asked when it can matter.
 */
async function azureNicNetwork(api: HnsApi, plan: Pick<DelPlan, 'conf' | 'attachment'>): Promise<string | undefined> {
  if (!plan.conf.adopt.includes('azure')) return undefined;
  let mac: string | undefined;
  try {
    mac = runtimeMac({ plan });
  } catch {
    return undefined;
  }
  if (!mac) return undefined;
  const name = azureNicNetworkName(mac);
  return (await step(`looking up HNS network "${name}"`, () => api.findNetworkByName(name)))?.id;
}

/**
 * Delegated-NIC mode: a network of the pod's own on its NIC (flags as Azure CNI's FrontendNIC networks:
 * endpoint-config.ts nicNetworkFlags), then the endpoint in it; the network is named after the attachment, so an
 * earlier attempt's is found by name (own-objects.ts). A DEL deletes that network after the endpoint, unless
 * another endpoint is on it (own-network.ts); a repair re-creates it from its recorded spec, as it is non-persistent
 * and goes with an HNS restart (repair-pod.ts).
 */
export const delegatedNicMode: AddMode & DelMode & RepairMode = {
  name: 'delegatedNic',
  check: () => undefined,
  networkFlags: (conf, host) => nicNetworkFlags(conf, host.version, host.hnsVersion),
  noSharedNetwork: 'delegated-NIC mode makes one network per pod',
  ownNetworkName: (owner) => nicNetworkName(owner),
  claimPlan: (a, existing) => planDelegated(a, existing),
  place: (a, got) => placeOnNic(a, got.addr, got.intent, got.existing),
  removeOwnNetwork: async (d, rec) => rec.network.owned && (await deleteOwnNetwork(d.api, rec.network.id, d.log)),
  previousNicNetwork: (api, plan) => azureNicNetwork(api, plan),
  networkNotRecreated: () => undefined,
};

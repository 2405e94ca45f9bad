/** The simulated host: adapters, HNS version and behaviour switches (SimHost). Defaults and validation. */
import type { SimAdapter, SimHost } from './control-types';
import { normalizeMac } from '../net/mac';
import { newGuid } from './guid';

export function defaultHost(): SimHost {
  return {
    adapters: [
      {
        Name: 'Ethernet',
        MacAddress: '00-15-5D-AA-00-01',
        InterfaceDescription: 'Microsoft Hyper-V Network Adapter',
        InterfaceIndex: 4,
        InterfaceGuid: '{5A1C0F9E-4B1D-4C7A-9E21-0000000000A1}',
      },
      {
        Name: 'Ethernet 2',
        MacAddress: '00-15-5D-AA-00-02',
        InterfaceDescription: 'Microsoft Hyper-V Network Adapter #2',
        InterfaceIndex: 7,
        InterfaceGuid: '{5A1C0F9E-4B1D-4C7A-9E21-0000000000A2}',
      },
    ],
    version: { major: 15, minor: 4 },
    v2: true,
    // No public source says which real HNS does: its callers delete endpoints before their network (microsoft/hcsshim
    // hcn/hcnendpoint_test.go), and HNS names a refusal for it
    // (HCN_E_ENTITY_HAS_REFERENCES 0x803B002C, golang.org/x/sys windows/zerrors_windows.go). Cascade is the default
    // because it is the harmful one: the plugin must never count on a refusal (src/orphans/network-holders.ts).
    deleteNetworkWithEndpoints: 'cascade',
    race: 'delete-wins',
    seed: 1,
    latencyMs: {},
  };
}

/** Checks one adapter and returns it in canonical form (uppercase dashed MAC, an index, a description). */
export function checkAdapter(a: unknown, taken: readonly SimAdapter[]): SimAdapter {
  const x = a as Partial<SimAdapter> | null;
  if (!x || typeof x.Name !== 'string' || x.Name.trim() === '') throw new Error('adapter needs a Name');
  const mac = normalizeMac(x.MacAddress, 'separated');
  if (!mac) throw new Error(`adapter ${x.Name}: MacAddress ${JSON.stringify(x.MacAddress)} is not a MAC address`);
  if (taken.some((t) => t.Name.toLowerCase() === x.Name!.toLowerCase()))
    throw new Error(`adapter ${x.Name} already exists`);
  const index = x.InterfaceIndex ?? Math.max(3, ...taken.map((t) => t.InterfaceIndex ?? 0)) + 1;
  return {
    Name: x.Name,
    MacAddress: mac,
    InterfaceDescription: x.InterfaceDescription ?? `Microsoft Hyper-V Network Adapter #${index}`,
    InterfaceIndex: index,
    InterfaceGuid: x.InterfaceGuid ?? `{${newGuid('v1')}}`,
  };
}

export function checkLatency(op: string, ms: unknown): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
    throw new Error(`latency for ${op} must be a number of ms >= 0`);
  return ms;
}

/** Defaults overlaid with a partial host (from --host FILE or startSimulator's options), validated. */
export function makeHost(partial: Partial<SimHost> = {}): SimHost {
  const host = defaultHost();
  if (partial.adapters !== undefined) {
    if (!Array.isArray(partial.adapters)) throw new Error('host.adapters must be an array');
    host.adapters = [];
    for (const a of partial.adapters) host.adapters.push(checkAdapter(a, host.adapters));
  }
  if (partial.version !== undefined) {
    const v = partial.version;
    if (!Number.isInteger(v?.major) || !Number.isInteger(v?.minor))
      throw new Error('host.version must be {major, minor}');
    host.version = { major: v.major, minor: v.minor };
  }
  if (partial.v2 !== undefined) host.v2 = Boolean(partial.v2);
  if (partial.v1ErrorCodes !== undefined) host.v1ErrorCodes = Boolean(partial.v1ErrorCodes);
  if (partial.deleteNetworkWithEndpoints !== undefined) {
    if (!['cascade', 'refuse'].includes(partial.deleteNetworkWithEndpoints))
      throw new Error('host.deleteNetworkWithEndpoints: cascade or refuse');
    host.deleteNetworkWithEndpoints = partial.deleteNetworkWithEndpoints;
  }
  if (partial.race !== undefined) {
    if (!['delete-wins', 'create-wins', 'random'].includes(partial.race))
      throw new Error('host.race: delete-wins, create-wins or random');
    host.race = partial.race;
  }
  if (partial.seed !== undefined) {
    if (!Number.isInteger(partial.seed)) throw new Error('host.seed must be an integer');
    host.seed = partial.seed;
  }
  if (partial.idCase !== undefined) {
    if (!['as-stored', 'upper', 'mixed'].includes(partial.idCase))
      throw new Error('host.idCase: as-stored, upper or mixed');
    host.idCase = partial.idCase;
  }
  for (const [op, ms] of Object.entries(partial.latencyMs ?? {})) host.latencyMs[op] = checkLatency(op, ms);
  return host;
}

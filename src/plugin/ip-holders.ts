/**
 * Rule 1 of a migration: an address is never released to IPAM while any HNS endpoint — ours or another plugin's —
 * holds it. On a node switched from win-bridge with the same host-local dataDir, a DEL that released the address of
 * win-bridge's still-present endpoint let host-local hand it to the next pod, whose endpoint HNS then refused
 * (HCN_E_ADDR_INVALID_OR_RESERVED) — and the leaked endpoint stayed for good.
 *
 * Which address IPAM holds for the attachment is not something IPAM can be asked (CNI has no such verb); DEL knows it
 * from the attachment's record, from the runtime's prevResult (the cached ADD result, whichever plugin made it), and
 * from the pod's endpoint under a peer's naming scheme (peer-endpoints.ts). Any of those found on an endpoint still
 * listed keeps the allocation: the tombstone says ipamPending and names the holders, and the ADD or GC whose audit
 * no longer lists them releases it (pending-ipam.ts).
 */
import type { CniResult } from '../cni/types';
import { sameId, type EndpointInfo, type HnsApi } from '../hns/api';
import { isUnreachable } from '../hns/hcn-error';
import { canonicalIp } from '../net/addr';
import type { Logger } from '../log/logger';
import type { HeldBy, Owner } from '../state/records';
import type { StateStore } from '../state/store';
import { step, toCniError } from './to-cni-error';

/** The addresses (no prefix length, canonical spelling) of a result-like object (a record's result, prevResult). */
export function addressesOf(result: Pick<CniResult, 'ips'> | { ips?: unknown } | undefined): string[] {
  const ips = result?.ips;
  if (!Array.isArray(ips)) return [];
  return ips.flatMap((ip) => {
    const a = (ip as { address?: unknown } | null)?.address;
    return typeof a === 'string' ? [bare(a)] : [];
  });
}

/** An address without its prefix length, in canonical spelling: how holders are compared. */
export function bare(address: string): string {
  const ip = address.split('/')[0]!.trim();
  try {
    return canonicalIp(ip);
  } catch {
    return ip.toLowerCase();
  }
}

/** What an endpoint holds: one entry per address, in the spelling addressesOf gives. */
export function heldBy(e: EndpointInfo): HeldBy[] {
  return e.ips.map((ip) => ({ id: e.id, name: e.name, address: bare(ip.address) }));
}

/** The listed endpoints that hold one of the addresses (`except`: endpoints known to be gone or being removed). */
export function holdersOf(
  endpoints: readonly EndpointInfo[],
  addresses: readonly string[],
  except: readonly string[] = [],
): HeldBy[] {
  const wanted = new Set(addresses.map(bare));
  if (wanted.size === 0) return [];
  return endpoints
    .filter((e) => !except.some((id) => sameId(id, e.id)))
    .flatMap((e) => heldBy(e).filter((h) => wanted.has(h.address)));
}

/**
 * The endpoints holding any of the addresses: as `known` (a resident process's address book, address-book.ts) says
 * once it has a listing, else as HNS lists them. A listing that fails (HNS reachable) cannot say the address is
 * free: it counts as held by an unknown endpoint, so the allocation is kept (the safe side).
 */
export async function heldAddresses(
  api: HnsApi,
  addresses: readonly string[],
  known?: { holders(addresses: readonly string[]): HeldBy[] | undefined },
): Promise<HeldBy[]> {
  if (addresses.length === 0) return [];
  const fromKnown = known?.holders(addresses);
  if (fromKnown) return fromKnown;
  let endpoints: EndpointInfo[];
  try {
    endpoints = await api.listEndpoints();
  } catch (e) {
    if (isUnreachable(e)) throw toCniError(e, 'listing HNS endpoints for the addresses to release');
    const name = `(the endpoint listing failed: ${(e as Error).message})`;
    return addresses.map((a) => ({ id: 'unknown', name, address: bare(a) }));
  }
  return holdersOf(endpoints, addresses);
}

/** Keeps the attachment's allocation: the tombstone says ipamPending and names what holds the address. */
export async function keepForHolders(
  d: { readonly store: StateStore; readonly log: Logger },
  owner: Owner,
  holders: readonly HeldBy[],
  cniNetwork: string,
): Promise<void> {
  const { store, log } = d;
  log.warn(
    { holders: holders.map((h) => `${h.name} (${h.id}) ${h.address}`) },
    'DEL keeps the IP: another HNS endpoint still holds it; released once that endpoint is gone',
  );
  await step('tombstoning the attachment to keep its IP', () =>
    store.tombstone(owner, 'DEL kept the IP: another HNS endpoint holds it', {
      ipamPending: true,
      heldBy: holders.filter((h) => h.id !== 'unknown'),
      cniNetwork,
    }),
  );
}

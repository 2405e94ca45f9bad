/**
 * Which endpoints hold which addresses, as a resident process knows it without asking HNS: the last whole-node
 * listing (the node agent's audit, or an ADD's), with this process's own creates and deletes since played over it.
 * A DEL consults it in place of listing every endpoint of the node before it releases an address (ip-holders.ts:
 * never while any endpoint holds it), so its cost does not grow with the node.
 *
 * What it cannot know is an endpoint another process created after the last listing. On the pod's own network HNS
 * itself refuses a second holder of an address (HCN_E_ADDR_INVALID_OR_RESERVED), whichever comes first, and the ADD
 * turns that refusal into an audit of the holder (own-objects.ts), which never deletes a foreign endpoint: the
 * address is not handed to a second live endpoint there. Another network over the same subnet is seen at the next
 * listing (auditIntervalSeconds): docs/hns-round-trips.md says what that leaves.
 *
 * Until a first listing has been taken it knows nothing (holders answers undefined) and the DEL lists, as the
 * standalone executable always does. An entry whose endpoint went away unseen (an HNS restart, another process's
 * delete) only keeps an address longer: the tombstone's ipamPending releases it after the next audit.
 */
import type { EndpointInfo } from '../hns/api';
import type { HeldBy } from '../state/records';
import { bare, heldBy } from './ip-holders';

/** Own creates and deletes remembered between two listings, at most: past it, the book waits for a new listing. */
const MAX_JOURNAL = 100_000;

type Change = { seq: number; endpoint: EndpointInfo } | { seq: number; gone: string };

export class AddressBook {
  private seq = 0;
  /** By lower-cased id: what each known endpoint holds. */
  private endpoints = new Map<string, HeldBy[]>();
  /** By address, then lower-cased id: so that a DEL's question costs the same on a node of 100 pods or of 3 000. */
  private byAddress = new Map<string, Map<string, HeldBy>>();
  private journal: Change[] = [];
  private listed = false;

  /** Taken just before a whole-node listing starts: what this process did after it is played over the listing. */
  mark(): number {
    return ++this.seq;
  }

  /** A whole-node listing that started after `mark` was taken. */
  listing(mark: number, endpoints: readonly EndpointInfo[]): void {
    this.endpoints = new Map();
    this.byAddress = new Map();
    for (const e of endpoints) this.put(e);
    this.journal = this.journal.filter((c) => c.seq > mark);
    for (const c of this.journal) this.apply(c);
    this.listed = true;
  }

  /** An endpoint this process created (HNS answered the create with it). */
  created(endpoint: EndpointInfo): void {
    this.record({ seq: ++this.seq, endpoint });
  }

  /** An endpoint this process deleted (HNS answered the delete). */
  deleted(id: string): void {
    this.record({ seq: ++this.seq, gone: id });
  }

  /** The known endpoints holding any of the addresses, or undefined while no listing has been taken. */
  holders(addresses: readonly string[]): HeldBy[] | undefined {
    if (!this.listed) return undefined;
    return [...new Set(addresses.map(bare))].flatMap((a) => [...(this.byAddress.get(a)?.values() ?? [])]);
  }

  private record(c: Change): void {
    if (this.journal.length >= MAX_JOURNAL) {
      // Too long without a listing to replay it over: know nothing until the next one.
      this.journal = [];
      this.listed = false;
    }
    this.journal.push(c);
    this.apply(c);
  }

  private apply(c: Change): void {
    if ('endpoint' in c) this.put(c.endpoint);
    else this.drop(c.gone.toLowerCase());
  }

  private put(e: EndpointInfo): void {
    const id = e.id.toLowerCase();
    this.drop(id);
    const held = heldBy(e);
    this.endpoints.set(id, held);
    for (const h of held) {
      const at = this.byAddress.get(h.address) ?? new Map<string, HeldBy>();
      at.set(id, h);
      this.byAddress.set(h.address, at);
    }
  }

  private drop(id: string): void {
    for (const h of this.endpoints.get(id) ?? []) {
      const at = this.byAddress.get(h.address);
      at?.delete(id);
      if (at?.size === 0) this.byAddress.delete(h.address);
    }
    this.endpoints.delete(id);
  }
}

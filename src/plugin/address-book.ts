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
 * So the book answers only from a listing that is young enough for that promise (listingMaxAgeMs): at most twice the
 * configuration's auditIntervalSeconds old (the node agent lists once an interval; twice leaves room for one late
 * audit), and never for a configuration whose audit is off, which no node agent lists for. Otherwise — and until a
 * first listing has been taken — it answers undefined and the DEL lists, as the standalone executable always does.
 * An entry whose endpoint went away unseen (an HNS restart, another process's delete) only keeps an address longer:
 * the tombstone's ipamPending releases it after the next audit.
 */
import type { NetConf } from '../cni/types';
import type { EndpointInfo } from '../hns/api';
import type { HeldBy } from '../state/records';
import { bare, heldBy } from './ip-holders';

/** Own creates and deletes remembered between two listings, at most: past it, the book waits for a new listing. */
const MAX_JOURNAL = 100_000;
/** Listings begun and not (yet) handed in whose start time is kept, at most (an audit that failed hands none in). */
const MAX_MARKS = 16;

/**
 * How old a listing a DEL of this configuration may answer from, in ms: twice its audit interval; undefined with its
 * audit off (no listing is promised: the DEL lists).
 */
export function listingMaxAgeMs(conf: Pick<NetConf, 'audit' | 'auditIntervalSeconds'>): number | undefined {
  return conf.audit ? 2 * conf.auditIntervalSeconds * 1000 : undefined;
}

type Change = { seq: number; endpoint: EndpointInfo } | { seq: number; gone: string };

export class AddressBook {
  private seq = 0;
  /** By lower-cased id: what each known endpoint holds. */
  private endpoints = new Map<string, HeldBy[]>();
  /** By address, then lower-cased id: so that a DEL's question costs the same on a node of 100 pods or of 3 000. */
  private byAddress = new Map<string, Map<string, HeldBy>>();
  private journal: Change[] = [];
  private listed = false;
  /** When the listing the book holds began (the clock's time at its mark). */
  private listedAt = 0;
  /** When each pending listing began, by mark. */
  private readonly marks = new Map<number, number>();

  /** `clock`: a monotonic clock in ms (a wall clock stepped back would make an old listing look young). */
  constructor(private readonly clock: () => number = () => performance.now()) {}

  /** Taken just before a whole-node listing starts: what this process did after it is played over the listing. */
  mark(): number {
    if (this.marks.size >= MAX_MARKS) this.marks.delete(this.marks.keys().next().value!);
    this.marks.set(++this.seq, this.clock());
    return this.seq;
  }

  /** A whole-node listing that started after `mark` was taken. */
  listing(mark: number, endpoints: readonly EndpointInfo[]): void {
    this.listedAt = this.marks.get(mark) ?? this.clock();
    for (const m of this.marks.keys()) if (m <= mark) this.marks.delete(m);
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

  /**
   * The known endpoints holding any of the addresses, or undefined while the book cannot say: no listing taken yet,
   * or the one it holds began more than `maxAgeMs` ago (undefined: never answer; listingMaxAgeMs).
   */
  holders(addresses: readonly string[], maxAgeMs: number | undefined): HeldBy[] | undefined {
    if (!this.listed || maxAgeMs === undefined || this.clock() - this.listedAt > maxAgeMs) return undefined;
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

  /** The book as a DEL of this configuration consults it (ip-holders.ts heldAddresses): listingMaxAgeMs. */
  for(conf: Pick<NetConf, 'audit' | 'auditIntervalSeconds'>): {
    holders(addresses: readonly string[]): HeldBy[] | undefined;
  } {
    const maxAgeMs = listingMaxAgeMs(conf);
    return { holders: (addresses) => this.holders(addresses, maxAgeMs) };
  }
}

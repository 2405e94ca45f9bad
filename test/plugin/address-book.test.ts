/**
 * The service's address book (src/plugin/address-book.ts): which endpoints hold an address, from the last listing
 * with the service's own creates and deletes played over it, answered through an index by address so that a DEL's
 * question does not cost more on a bigger node. Checked against the rule it stands in for, holdersOf over the
 * endpoints the book should know (ip-holders.ts), over random sequences of listings, creates and deletes.
 */
import type { EndpointInfo } from '../../src/hns/api';
import { AddressBook } from '../../src/plugin/address-book';
import { holdersOf } from '../../src/plugin/ip-holders';
import type { HeldBy } from '../../src/state/records';

const endpoint = (id: string, ...addresses: string[]): EndpointInfo =>
  ({ id, name: `ep-${id}`, ips: addresses.map((address) => ({ address })) }) as unknown as EndpointInfo;

/** The book's answer, once it has a listing (undefined before it is a test of its own). */
function held(book: AddressBook, addresses: string[]): HeldBy[] {
  const h = book.holders(addresses, Infinity);
  if (!h) throw new Error('the book has no listing');
  return h;
}
const ids = (book: AddressBook, addresses: string[]) =>
  held(book, addresses)
    .map((h) => h.id)
    .sort();

const byId = (a: { id: string; address: string }, b: { id: string; address: string }) =>
  `${a.id} ${a.address}`.localeCompare(`${b.id} ${b.address}`);

it('knows nothing before its first listing', () => {
  const book = new AddressBook();
  book.created(endpoint('A', '10.0.0.2'));
  expect(book.holders(['10.0.0.2'], Infinity)).toBeUndefined();
});

it('answers from a listing at most twice the audit interval old, never for a configuration whose audit is off', () => {
  let now = 1_000;
  const book = new AddressBook(() => now);
  const on = book.for({ audit: true, auditIntervalSeconds: 60 });
  const off = book.for({ audit: false, auditIntervalSeconds: 60 });
  const mark = book.mark();
  now += 5_000; // the listing takes 5 s: its age counts from when it began
  book.listing(mark, [endpoint('FOREIGN', '10.0.0.2')]);
  now += 115_000;
  expect([on.holders(['10.0.0.2'])?.map((h) => h.id), off.holders(['10.0.0.2'])]).toEqual([['FOREIGN'], undefined]);
  now += 1; // 120 001 ms after the listing began: too old to say who holds an address now
  expect(on.holders(['10.0.0.2'])).toBeUndefined();
  book.listing(book.mark(), []);
  expect(on.holders(['10.0.0.2'])).toEqual([]);
});

it('an address held by two endpoints (ours and a foreign one) stays held until both are gone', () => {
  const book = new AddressBook();
  book.listing(book.mark(), [endpoint('OURS', '10.0.0.2'), endpoint('FOREIGN', '10.0.0.2/24')]);
  expect(ids(book, ['10.0.0.2/24'])).toEqual(['FOREIGN', 'OURS']);
  book.deleted('ours'); // ids compare case-insensitively, as HNS's do
  expect(ids(book, ['10.0.0.2'])).toEqual(['FOREIGN']);
});

it('an endpoint created again with another address no longer holds its old one', () => {
  const book = new AddressBook();
  book.listing(book.mark(), [endpoint('A', '10.0.0.2')]);
  book.created(endpoint('a', '10.0.0.3'));
  expect(held(book, ['10.0.0.2'])).toEqual([]);
  expect(ids(book, ['10.0.0.3'])).toEqual(['a']);
});

it('a create made while a listing ran is played over that listing; one made before it is not replayed', () => {
  const book = new AddressBook();
  book.created(endpoint('OLD', '10.0.0.9'));
  const mark = book.mark();
  book.created(endpoint('NEW', '10.0.0.5'));
  book.listing(mark, [endpoint('LISTED', '10.0.0.6')]);
  expect(ids(book, ['10.0.0.5', '10.0.0.6', '10.0.0.9'])).toEqual(['LISTED', 'NEW']);
});

it('answers as holdersOf over the endpoints it should know, through any sequence of listings, creates and deletes', () => {
  let seed = 7;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const address = () => `10.0.${rand(3)}.${rand(6)}`;
  for (let round = 0; round < 50; round++) {
    const book = new AddressBook();
    let known = new Map<string, EndpointInfo>();
    book.listing(book.mark(), []);
    for (let step = 0; step < 60; step++) {
      const id = `E${rand(12)}`;
      const op = rand(10);
      if (op < 5) {
        // An HNS endpoint holds each of its addresses once.
        const e = endpoint(id, ...new Set(Array.from({ length: 1 + rand(2) }, address)));
        book.created(e);
        known.set(id.toLowerCase(), e);
      } else if (op < 9) {
        book.deleted(id);
        known.delete(id.toLowerCase());
      } else {
        const listed = Array.from({ length: rand(6) }, (_, i) => endpoint(`L${i}`, address()));
        book.listing(book.mark(), listed);
        known = new Map(listed.map((e) => [e.id.toLowerCase(), e]));
      }
      const asked = [address(), address()];
      expect(held(book, asked).sort(byId)).toEqual(holdersOf([...known.values()], asked).sort(byId));
    }
  }
});

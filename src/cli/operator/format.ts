/** Plain-text tables and the small renderings the operator commands share. */
import { NetworkFlags } from '../../hns/schema';
import { parseOwnedName } from '../../orphans/ownership';

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** A list cell: comma-joined, "-" when empty. */
export function list(items: ReadonlyArray<string | undefined>): string {
  const xs = items.filter((x): x is string => !!x);
  return xs.length ? xs.join(',') : '-';
}

export function dash(v: string | number | undefined | null): string {
  return v === undefined || v === null || v === '' ? '-' : String(v);
}

/** The owner of an object of ours: known (from its name or the state), or only its owner tag. */
export type NamedOwner = { containerId: string; ifname: string; mac?: string } | { tag: string };

/**
 * The owner an HNS name of ours stands for, or undefined for any other name. Names carry the owner's tag (see
 * orphans/ownership.ts): `known` (the state's owners, by tag) turns it into the attachment.
 */
export function ownerOfName(
  name: string,
  known?: ReadonlyMap<string, { containerId: string; ifname: string; mac?: string }>,
): NamedOwner | undefined {
  const p = parseOwnedName(name);
  if (!p) return undefined;
  const owner = p.owner ? { ...p.owner, ...(p.mac ? { mac: p.mac } : {}) } : known?.get(p.tag);
  return owner ? { ...owner } : { tag: p.tag };
}

export function ownerText(o: NamedOwner | { containerId: string; ifname: string } | undefined): string {
  if (!o) return '-';
  return 'tag' in o ? `? (owner tag ${o.tag})` : `${o.containerId}@${o.ifname}`;
}

const FLAG_NAMES = Object.entries(NetworkFlags).filter(([, v]) => v !== 0) as Array<[string, number]>;

/** NetworkFlags bits by name ("EnableNonPersistent"), unknown bits in hex. */
export function flagNames(flags: number): string[] {
  const names: string[] = [];
  let rest = flags >>> 0;
  for (const [name, bit] of FLAG_NAMES) {
    if ((rest & bit) !== 0) {
      names.push(name);
      rest &= ~bit;
    }
  }
  if (rest !== 0) names.push(`0x${rest.toString(16)}`);
  return names;
}

/** "2024-05-01T10:00:00.000Z (3m ago)" / "(in 20s)". */
export function when(ms: number, now: number): string {
  const iso = Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms);
  const d = ms - now;
  return `${iso} (${d >= 0 ? `in ${duration(d)}` : `${duration(-d)} ago`})`;
}

export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.round(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.round(h / 24)}d`;
}

export function plural(n: number, word: string, pluralWord = `${word}s`): string {
  return `${n} ${n === 1 ? word : pluralWord}`;
}

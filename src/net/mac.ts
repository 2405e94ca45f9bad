/**
 * MAC addresses in the form HNS writes them ("AA-BB-CC-DD-EE-FF"), one name per meaning: normalizeMac for any MAC
 * text, unicastMac for one a NIC can have. Shared by the plugin, the HCN facade and the simulator.
 */
import { formatMacDash, parseMac, unicastMacProblem } from './addr';

/**
 * normalizeMac: "AA-BB-CC-DD-EE-FF" for six-byte MAC text (colons or dashes, or bare hex unless `notation` is
 * 'separated'), unicast or not, blanks around it ignored; undefined for anything else.
 */
export function normalizeMac(text: unknown, notation: 'any' | 'separated' = 'any'): string | undefined {
  if (typeof text !== 'string') return undefined;
  const trimmed = text.trim();
  if (notation === 'separated' && !/[:-]/.test(trimmed)) return undefined;
  const bytes = parseMac(trimmed);
  return bytes ? formatMacDash(bytes) : undefined;
}

/** unicastMac: "AA-BB-CC-DD-EE-FF", or undefined when the text is not a usable unicast MAC (any notation). */
export function unicastMac(text: string): string | undefined {
  const bytes = parseMac(text.trim());
  return bytes && !unicastMacProblem(bytes) ? formatMacDash(bytes) : undefined;
}

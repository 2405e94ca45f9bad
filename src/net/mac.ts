import { formatMacDash, parseMac, unicastMacProblem } from './addr';

/** "AA-BB-CC-DD-EE-FF" (the form HNS writes), or undefined when the text is not a usable unicast MAC. */
export function normalizeMac(text: string): string | undefined {
  const bytes = parseMac(text.trim());
  return bytes && !unicastMacProblem(bytes) ? formatMacDash(bytes) : undefined;
}

/** "AA-BB-CC-DD-EE-FF" for any six-byte MAC text (colons, dashes or bare hex), unicast or not; else undefined. */
export function canonicalMac(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  const bytes = parseMac(text.trim());
  return bytes ? formatMacDash(bytes) : undefined;
}

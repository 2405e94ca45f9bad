import { formatMacDash, parseMac, unicastMacProblem } from './addr';

/** "AA-BB-CC-DD-EE-FF" (the form HNS writes), or undefined when the text is not a usable unicast MAC. */
export function normalizeMac(text: string): string | undefined {
  const bytes = parseMac(text.trim());
  return bytes && !unicastMacProblem(bytes) ? formatMacDash(bytes) : undefined;
}

/**
 * MAC addresses as HNS writes them: dash-separated uppercase ("00-15-5D-52-C3-A1"). Endpoints get theirs from the
 * network's MacPool, or from the host's default pool in the Hyper-V OUI 00-15-5D (the MacPool ranges of
 * MicrosoftDocs/windowsserverdocs WindowsServerDocs/networking/technologies/hcn/hcn-scenarios.md and microsoft/hcsshim
 * hcn/hcnv1schema_test.go, 00-15-5D-52-C0-00…CF-FF; the default pool's own range is our choice).
 */
export interface MacRange {
  start: string;
  end: string;
}

/** The host's default pool: 4096 addresses in the Hyper-V OUI 00-15-5D. */
export const DEFAULT_MAC_POOL: MacRange = { start: '00-15-5D-51-80-00', end: '00-15-5D-51-8F-FF' };

export function macToInt(mac: string): number {
  return parseInt(mac.replace(/-/g, ''), 16);
}

export function intToMac(n: number): string {
  const hex = n.toString(16).toUpperCase().padStart(12, '0');
  return hex.match(/../g)!.join('-');
}

/** First address of the pools that is not in use, or undefined when every pool is exhausted. */
export function allocateMac(pools: MacRange[], inUse: (mac: number) => boolean): string | undefined {
  // Compared as numbers: formatting every candidate made a create on a node of thousands cost milliseconds.
  for (const pool of pools) {
    const end = macToInt(pool.end);
    for (let n = macToInt(pool.start); n <= end; n++) if (!inUse(n)) return intToMac(n);
  }
  return undefined;
}

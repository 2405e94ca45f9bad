/**
 * Which HNS API "auto" picks (src/plugin/api-version.ts): HCN (v2) when the host has it and HNS reports 9.2 or later
 * (hcsshim's V2ApiSupported rule, microsoft/hcsshim hcn/hcnsupport.go), else v1 — a property of the host, pinned at
 * the boundary.
 */
import type { Hcn } from '../../src/hns/hcn';
import { chooseApi } from '../../src/plugin/api-version';

function host(major: number, minor: number, o: { v1?: boolean; v2?: boolean } = {}): Hcn {
  return {
    capabilities: { v1Supported: o.v1 ?? true, v2Supported: o.v2 ?? true, missing: [] },
    version: async () => ({ major, minor }),
  } as unknown as Hcn;
}
const pick = async (major: number, minor: number, o?: { v1?: boolean; v2?: boolean }) =>
  (await chooseApi('auto', host(major, minor, o))).version;

describe('apiVersion auto', () => {
  it('chooses HCN (v2) from HNS 9.2 on, and v1 at 9.1', async () => {
    expect(await pick(9, 2)).toBe(2);
    expect(await pick(9, 1)).toBe(1);
  });

  it('compares the major version first: 10.0 is v2, 8.9 is v1', async () => {
    expect(await pick(10, 0)).toBe(2);
    expect(await pick(8, 9)).toBe(1);
  });

  it('chooses v1 on a host without HCN, whatever the HNS version', async () => {
    expect(await pick(15, 4, { v2: false })).toBe(1);
  });
});

/**
 * Which HNS API to use is a property of the host (seed 001): `apiVersion` from the configuration, or, on "auto",
 * HCN (v2) when computenetwork.dll is there and HNS reports version 9.2 or later — hcsshim's V2ApiSupported rule —
 * else v1 (HNSCall). The netns plays no part in it.
 */
import { CniCode, CniError } from '../cni/cni-error';
import type { ApiVersionSetting } from '../cni/types';
import { V1Api, V2Api, type HnsApi, type Listing } from '../hns/api';
import { formatVersion, minimumVersion, supports, type HnsVersion } from '../hns/features';
import type { Hcn } from '../hns/hcn';
import type { HeldHandles } from '../hns/held-handles';
import { toCniError } from './to-cni-error';

export interface ApiChoice {
  api: HnsApi;
  version: 1 | 2;
  reason: string;
  hnsVersion?: HnsVersion;
}

function why(hcn: Hcn): string {
  const c = hcn.capabilities;
  return c.loadError ?? (c.missing.length ? `missing ${c.missing.join(', ')}` : 'not loaded');
}

/** `held`: the HCN handles a resident process keeps between verbs (src/hns/held-handles.ts), used on an HCN host. */
export async function chooseApi(
  setting: ApiVersionSetting,
  hcn: Hcn,
  listing: Listing = 'auto',
  held?: HeldHandles,
): Promise<ApiChoice> {
  const caps = hcn.capabilities;
  if (setting === 1 || setting === 2) return configuredApi(setting, hcn, listing, held);
  let hnsVersion: HnsVersion | undefined;
  if (caps.v1Supported) {
    try {
      hnsVersion = await hcn.version();
    } catch (e) {
      throw toCniError(e, 'asking HNS for its version');
    }
  }
  const shown = hnsVersion ? formatVersion(hnsVersion) : 'unknown (no HNSCall)';
  if (caps.v2Supported && (!hnsVersion || supports(hnsVersion, 'v2'))) {
    return {
      api: new V2Api(hcn, listing, held),
      version: 2,
      reason: `auto: HCN present, HNS version ${shown} >= ${minimumVersion('v2')}`,
      ...(hnsVersion ? { hnsVersion } : {}),
    };
  }
  if (caps.v1Supported) {
    const because = caps.v2Supported ? `HNS version ${shown} < ${minimumVersion('v2')}` : `HCN absent (${why(hcn)})`;
    return { api: new V1Api(hcn), version: 1, reason: `auto: ${because}`, ...(hnsVersion ? { hnsVersion } : {}) };
  }
  throw new CniError(
    CniCode.API_UNAVAILABLE,
    `neither HCN (computenetwork.dll) nor HNSCall (vmcompute.dll) is available: ${why(hcn)}`,
  );
}

/** The API the configuration names (apiVersion 1 or 2), when the host has it. */
function configuredApi(setting: 1 | 2, hcn: Hcn, listing: Listing, held?: HeldHandles): ApiChoice {
  const caps = hcn.capabilities;
  if (setting === 2) {
    if (!caps.v2Supported)
      throw new CniError(
        CniCode.API_UNAVAILABLE,
        `apiVersion 2 needs HCN (computenetwork.dll), which this host lacks: ${why(hcn)}`,
      );
    return { api: new V2Api(hcn, listing, held), version: 2, reason: 'apiVersion 2 in the configuration' };
  }
  if (!caps.v1Supported)
    throw new CniError(
      CniCode.API_UNAVAILABLE,
      `apiVersion 1 needs HNSCall (vmcompute.dll), which this host lacks: ${why(hcn)}`,
    );
  return { api: new V1Api(hcn), version: 1, reason: 'apiVersion 1 in the configuration' };
}

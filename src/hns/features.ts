/**
 * What the host's HNS can do, from its version, the way hcsshim decides it (microsoft/hcsshim hcn/hcnsupport.go
 * getSupportedFeatures with the ranges of hcn/hcnglobals.go). A feature the host lacks is a clear CNI error or a
 * logged skip in the plugin, never an HNS error. Every comparison of an HNS version, and how one is shown, is here
 * (test/architecture/one-home.test.ts fails on one elsewhere).
 */
export interface HnsVersion {
  major: number;
  minor: number;
}

type Range = readonly [min: HnsVersion, max: HnsVersion];
const MAX = Number.MAX_SAFE_INTEGER;
const from = (major: number, minor: number): Range => [
  { major, minor },
  { major: MAX, minor: MAX },
];
const within = (major: number, minor: number, maxMajor: number): Range => [
  { major, minor },
  { major: maxMajor, minor: MAX },
];

/** hcsshim hcn/hcnglobals.go. */
const RANGES = {
  /** V2ApiSupport: "auto" picks HCN (v2) from here on (hcsshim V2ApiSupported). */
  v2: [from(9, 2)],
  /** IPv6DualStackVersion: endpoints with IPv6 addresses (hcsshim hcn/hcn.go IPv6DualStackSupported). */
  ipv6DualStack: [from(11, 10)],
  /** DSRVersion: 9.3–9.x and 10.2 on. */
  dsr: [within(9, 3, 9), from(10, 2)],
  /** DisableHostPortVersion. */
  disableHostPort: [from(15, 1)],
  /** AccelnetVersion: the EnableIov flag and the Iov endpoint policy (Azure network/network_windows.go sets them for
   *  FrontendNIC networks, network/policy/policy_windows.go AddAccelnetPolicySetting). */
  iov: [from(15, 4)],
  /**
   * The InterfaceParameters endpoint policy (MTU) is new in HCN schema 2.4 (MicrosoftDocs HNS_Schema.md), which
   * Windows Server 2019's HNS does not speak. hcsshim's ranges keep 9.x (the 1809 / Server 2019 servicing line,
   * e.g. DSR's 9.3–9.x backport) apart from 10.x on; so: HNS 10.0 or later. Inferred, not verified on a host.
   */
  interfaceParameters: [from(10, 0)],
} as const;

export type HnsFeature = keyof typeof RANGES;

/** Every feature this table knows, for the doctor's account of the host. */
export const HNS_FEATURES = Object.keys(RANGES) as HnsFeature[];

/** hcsshim isFeatureInRange. */
function inRange(v: HnsVersion, [min, max]: Range): boolean {
  if (v.major < min.major || v.major > max.major) return false;
  if (v.major === min.major && v.minor < min.minor) return false;
  if (v.major === max.major && v.minor > max.minor) return false;
  return true;
}

/** Whether the host has the feature; an unknown version supports nothing (hcsshim: no globals, no features). */
export function supports(version: HnsVersion | undefined, feature: HnsFeature): boolean {
  return !!version && RANGES[feature].some((r) => inRange(version, r));
}

/** An HNS version as HNS and the messages show it: "11.10". */
export function formatVersion(v: HnsVersion): string {
  return `${v.major}.${v.minor}`;
}

/** The first version that has the feature ("9.2" for v2), for messages that compare a host against it. */
export function minimumVersion(feature: HnsFeature): string {
  return formatVersion(RANGES[feature][0][0]);
}

/** "HNS 9.3–9.x or 10.2 or later", for error messages. */
export function describeRequirement(feature: HnsFeature): string {
  return RANGES[feature]
    .map(([min, max]) =>
      max.major === MAX ? `${formatVersion(min)} or later` : `${formatVersion(min)}–${max.major}.x`,
    )
    .join(' or ');
}

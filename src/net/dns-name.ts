/**
 * The kinds of DNS value a pod's endpoint carries to HNS: domain names (search list, domain) and resolver options.
 * HNS v1 joins the search list with "," into one DNSSuffix string (microsoft/hcsshim internal/hns/hnsendpoint.go
 * HNSEndpoint.DNSSuffix; containernetworking/plugins pkg/hns/endpoint_windows.go GenerateHnsEndpoint
 * `strings.Join(epInfo.DNS.Search, ",")`), so a "," inside one entry becomes two suffixes, and a blank or a control
 * character ends up in the pod's resolver configuration as it is. Only what the kind allows is let through.
 */

/**
 * A domain name in host-name syntax (RFC 1123 section 2.1, RFC 1035 section 2.3.1): labels of letters, digits and
 * "-", 1 to 63 characters, neither beginning nor ending with "-", joined by "."; at most 253 characters (the
 * longest name RFC 1035 section 3.1's 255 octets can hold in text). One trailing "." (the root) is allowed, as
 * Kubernetes allows it in a pod's search list (kubernetes/kubernetes pkg/apis/core/validation/validation.go
 * validatePodDNSConfig).
 */
export const MAX_DOMAIN_NAME = 253;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** Why `s` is not a domain name, or undefined when it is one. */
export function domainNameProblem(s: string): string | undefined {
  const name = s.endsWith('.') ? s.slice(0, -1) : s;
  if (name === '') return 'it is empty';
  if (name.length > MAX_DOMAIN_NAME) return `it is ${name.length} characters long (at most ${MAX_DOMAIN_NAME})`;
  const bad = name.split('.').find((l) => !LABEL.test(l));
  if (bad === undefined) return undefined;
  return bad === ''
    ? 'it has an empty label ("..", or a leading ".")'
    : `its label ${JSON.stringify(bad.length > 40 ? `${bad.slice(0, 37)}...` : bad)} is not 1 to 63 letters, digits and "-" (not at either end)`;
}

/** A DNS label (RFC 1123): what a Kubernetes namespace name is (and what is put before a search domain). */
export function isDnsLabel(s: string): boolean {
  return LABEL.test(s);
}

/**
 * The limits Kubernetes puts on a pod's search list (kubernetes/kubernetes pkg/apis/core/validation/validation.go:
 * MaxDNSSearchPaths = 32, MaxDNSSearchListChars = 2048), which no real list exceeds.
 */
export const MAX_DNS_SEARCH_ENTRIES = 32;
export const MAX_DNS_SEARCH_CHARS = 2048;
/** Nameservers and resolver options: bounded alike (resolv.conf(5) knows about fifteen options). */
export const MAX_DNS_LIST_ENTRIES = 32;

/**
 * A resolver option as resolv.conf(5) spells one and the kubelet passes it (`name` or `name:value`, as in
 * "ndots:5"): a name of letters, digits, "-", "_" and ".", then optionally ":" and a value of visible ASCII
 * characters other than ","; at most 255 characters.
 */
const RESOLVER_OPTION = /^[A-Za-z0-9][A-Za-z0-9_.-]*(?::[\x21-\x2b\x2d-\x7e]*)?$/;
export const MAX_RESOLVER_OPTION = 255;

export function isResolverOption(s: string): boolean {
  return s.length <= MAX_RESOLVER_OPTION && RESOLVER_OPTION.test(s);
}

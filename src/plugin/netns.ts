/**
 * The netns decides how to attach, never which API to use (seed 001: Azure CNI chose HNS v1 whenever the netns was
 * not a GUID, so Docker-style runtimes never got v2).
 *  - a GUID (containerd): the HCN namespace to put the endpoint in;
 *  - `none` or empty (Docker/dockershim pod sandbox): attach the endpoint to the sandbox container by its id;
 *  - `container:<id>` (a workload container of that sandbox): share the sandbox's endpoint, create nothing.
 */
import { CniCode, CniError } from '../cni/cni-error';
import { GUID_PATTERN } from '../net/guid';

export type AttachTarget =
  { kind: 'namespace'; namespaceId: string } | { kind: 'container' } | { kind: 'shared'; sandboxId: string };

const CONTAINER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * Exact spellings only: "none" and "container:" are what Docker and dockershim pass (the CNI spec leaves CNI_NETNS
 * to the runtime); "NONE" or "none " are not those values misspelt harmlessly but something else, and guessing
 * would attach a pod the wrong way. A GUID is case-insensitive (it is a number).
 */
export function parseNetns(netns: string): AttachTarget {
  const s = netns;
  if (s === '' || s === 'none') return { kind: 'container' };
  const g = GUID_PATTERN.exec(s);
  if (g) return { kind: 'namespace', namespaceId: g[1]!.toLowerCase() };
  if (s.startsWith('container:')) {
    const id = s.slice('container:'.length);
    if (CONTAINER_ID.test(id)) return { kind: 'shared', sandboxId: id };
  }
  throw new CniError(
    CniCode.INVALID_ENV,
    `CNI_NETNS must be an HCN namespace GUID, "none", or "container:<id>"; got ${JSON.stringify(netns)}`,
  );
}

/**
 * What `hcn-cni uninstall` will do, decided before anything is done, so that the dry run prints exactly the plan the
 * real run then carries out. Pure: the audit's judgement of every HNS network and endpoint (src/orphans/detect.ts:
 * ownership by name, the only rule of what is ours), the state's attachments, and the files install put, in; the
 * plan and its lines out.
 *
 * - Never touched: every object the audit calls foreign (not named by us: another plugin's networks and endpoints,
 *   `nat`, `ext`, a win-bridge endpoint `<id>_<network>`), and load balancers and policy lists, which hcn-cni never
 *   creates and so never lists (unlike Azure CNI's cleanupnetwork.ps1, which removes every policy list on the node).
 * - Pods still attached (committed records of this network): their DEL is the runtime's. Removed here only with
 *   force, through the plugin's own DEL path (detach, delete, confirm gone, then release the IP through the IPAM that
 *   allocated it); otherwise uninstall refuses and changes nothing: cutting the network of running pods is what a
 *   drain avoids, and a plugin removed under them would leave their later DELs nothing to run.
 * - Ours and claimed by nothing (audit verdict orphan): deleted. In-flight (an ADD running now) or protected (an
 *   unreadable record, an attached endpoint nothing says is gone): refused, whatever force says — they are not
 *   provably dead.
 * - Files: the conflist first (containerd stops choosing the plugin for new pods), the HNS work, then the shim and
 *   the standalone executable, and leftovers of earlier installs.
 */
import type { Judged } from '../orphans/detect';

export interface PodAttachment {
  /** containerId@ifname (ownerKey) */
  key: string;
  endpoint: { id: string; name: string };
  addresses: string[];
  /** The IPAM that allocated its addresses, or undefined when HNS assigned them. */
  ipam?: string;
}

export interface UninstallInputs {
  judged: readonly Judged[];
  pods: readonly PodAttachment[];
  /** Files install put that exist now, in removal order (conflist first, then shim, standalone, leftovers). */
  files: readonly { what: string; path: string }[];
  force: boolean;
}

export interface UninstallPlan {
  /** Why nothing will be done, when something must stop it. */
  refusal?: string;
  delPods: PodAttachment[];
  deleteObjects: Judged[];
  files: { what: string; path: string }[];
  /** Foreign objects, counted by kind: never touched. */
  foreign: { networks: number; endpoints: number };
}

export function planUninstall(i: UninstallInputs): UninstallPlan {
  const foreign = {
    networks: i.judged.filter((j) => j.verdict === 'foreign' && j.kind === 'network').length,
    endpoints: i.judged.filter((j) => j.verdict === 'foreign' && j.kind === 'endpoint').length,
  };
  const podEndpoints = new Set(i.pods.map((p) => p.endpoint.id.toLowerCase()));
  const unsure = i.judged.filter(
    (j) => (j.verdict === 'in-flight' || j.verdict === 'protected') && !podEndpoints.has(j.id.toLowerCase()),
  );
  const plan: UninstallPlan = {
    delPods: i.pods.slice(),
    deleteObjects: i.judged.filter((j) => j.verdict === 'orphan'),
    files: i.files.slice(),
    foreign,
  };
  if (unsure.length > 0) {
    plan.refusal = `${unsure.length} HNS object(s) of ours are not provably unused (${unsure
      .map((j) => `${j.kind} ${j.name}: ${j.verdict}, ${j.reason}`)
      .join('; ')}); nothing was changed — wait for the ADD to finish, or clear the quarantine (hcn-cni state)`;
  } else if (i.pods.length > 0 && !i.force) {
    plan.refusal = `${i.pods.length} pod(s) still attached (${i.pods
      .map((p) => p.key)
      .join(', ')}); nothing was changed — drain the node so the runtime DELs them, or --force to DEL them here`;
  }
  return plan;
}

/** The plan, one line per action: what a dry run prints and what the real run prints before it acts. */
export function describePlan(p: UninstallPlan): string[] {
  const lines: string[] = [];
  for (const pod of p.delPods)
    lines.push(
      `DEL pod ${pod.key}: endpoint ${pod.endpoint.name} (${pod.endpoint.id})${
        pod.addresses.length
          ? `, ${pod.addresses.join(', ')} ${pod.ipam ? `released through ipam ${pod.ipam}` : 'from HNS'}`
          : ''
      }`,
    );
  for (const j of p.deleteObjects) lines.push(`delete ${j.kind} ${j.name} (${j.id}): ${j.reason}`);
  for (const f of p.files) lines.push(`remove ${f.what} ${f.path}`);
  lines.push(
    `leave ${p.foreign.networks} network(s) and ${p.foreign.endpoints} endpoint(s) not named by hcn-cni, and every load balancer and policy list (hcn-cni makes none)`,
  );
  return lines;
}

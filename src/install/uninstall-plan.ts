/**
 * What `hcn-cni uninstall` will do, decided before anything is done, so that the dry run prints exactly the plan the
 * real run then carries out. Pure: the audit's judgement of every HNS network and endpoint (src/orphans/detect.ts:
 * ownership by name, the only rule of what is ours), the state's attachments, and the files install put, in; the
 * plan and its lines out.
 *
 * - Never touched: every object the audit calls foreign (not named by us: another plugin's networks and endpoints,
 *   `nat`, `ext`, a win-bridge endpoint `<id>_<network>`), and load balancers and policy lists, which hcn-cni never
 *   creates and so never lists (unlike Azure CNI's cleanupnetwork.ps1, which removes every policy list on the node).
 * - Pods still attached (committed records of any hcn-cni network of the node: every conflist of the conf dir that
 *   names the plugin, and every record in the state directories those name): their DEL is the runtime's. Removed
 *   here only with force, through the plugin's own DEL path with their own network's configuration (detach, delete,
 *   confirm gone, then release the IP through the IPAM that allocated it); otherwise uninstall refuses and changes
 *   nothing: cutting the network of running pods is what a drain avoids, and a plugin removed under them would leave
 *   their later DELs nothing to run. A pod whose network no conflist names any more is refused whatever force says:
 *   its IPAM configuration is gone, so a DEL here would keep its address allocated for good.
 * - Ours and claimed by nothing (audit verdict orphan): deleted. In-flight (an ADD running now) or protected (an
 *   unreadable record, an attached endpoint nothing says is gone, a network holding another plugin's endpoint): refused,
 *   whatever force says — they are not provably dead. So is a pod's network of ours that another plugin's endpoint
 *   is on too: the pod's DEL would keep that network, and with the plugin gone nothing would ever remove it.
 *   src/cli/uninstall.ts looks at HNS again after the DELs, for what arrived meanwhile.
 * - Files: only once the HNS work succeeded — the shim, the standalone executable and leftovers of earlier installs,
 *   then the conflists last: a run that fails leaves everything the next run needs (the state directory and each
 *   network's IPAM configuration are in the conflists), and a conflist never names a plugin that was removed while
 *   uninstall could still stop.
 */
import { sameId } from '../hns/api';
import type { Judged } from '../orphans/detect';
import { nextStep } from '../orphans/next-step';

export interface PodAttachment {
  /** containerId@ifname (ownerKey) */
  key: string;
  endpoint: { id: string; name: string };
  addresses: string[];
  /** The IPAM that allocated its addresses, or undefined when HNS assigned them. */
  ipam?: string;
  /** Its CNI network (the record's), and the conflist that configures it: undefined when none does any more. */
  network: string;
  conflist?: string;
}

export interface UninstallInputs {
  judged: readonly Judged[];
  pods: readonly PodAttachment[];
  /** The node's hcn-cni networks (the installed conflist's first): pods are named with theirs when there are two. */
  networks: readonly string[];
  /** Files to remove that exist now, in removal order (shim, standalone, leftovers, then the conflists). */
  files: readonly { what: string; path: string }[];
  force: boolean;
}

export interface UninstallPlan {
  /** The node's hcn-cni networks, as given. */
  networks: readonly string[];
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
  const stranded = i.pods.filter((p) => p.conflist === undefined);
  const sharing = networksSharedWithPeers(i.judged);
  const plan: UninstallPlan = {
    networks: i.networks,
    delPods: i.pods.slice(),
    deleteObjects: i.judged.filter((j) => j.verdict === 'orphan'),
    files: i.files.slice(),
    foreign,
  };
  if (unsure.length > 0) {
    const steps = [...new Set(unsure.map((j) => nextStep(j)!))];
    plan.refusal = `${unsure.length} HNS object(s) of ours are not provably unused (${unsure
      .map((j) => `${j.kind} ${j.name}: ${j.verdict}, ${j.reason}`)
      .join('; ')}); nothing was changed — ${steps.join('; ')}`;
  } else if (stranded.length > 0) {
    plan.refusal = `${stranded.length} pod(s) still attached to a network that no conflist names (${stranded
      .map((p) => podLabel(p, i.networks))
      .join(
        ', ',
      )}): without its IPAM configuration their addresses could not be released; nothing was changed — put their conflist back in the conf directory, or give the --conf-dir that holds it`;
  } else if (sharing.length > 0) {
    plan.refusal = `${sharing.length} network(s) of ours also hold endpoints not named by hcn-cni (${sharing.join(
      '; ',
    )}): their pods' DEL keeps such a network (deleting it would take those endpoints with it), and with the plugin gone nothing would remove it; nothing was changed — ${nextStep({ verdict: 'protected', held: 'holds-foreign' })!}`;
  } else if (i.pods.length > 0 && !i.force) {
    plan.refusal = `${i.pods.length} pod(s) still attached (${i.pods
      .map((p) => podLabel(p, i.networks))
      .join(', ')}); nothing was changed — drain the node so the runtime DELs them, or --force to DEL them here`;
  }
  return plan;
}

/**
 * Networks of ours that a pod's DEL would have to leave because another plugin's endpoint is on them too, as
 * `<name>: <endpoints>`. Only live ones: an orphan network holding one is already protected (detect.ts).
 */
function networksSharedWithPeers(judged: readonly Judged[]): string[] {
  const foreign = judged.filter((j) => j.kind === 'endpoint' && j.verdict === 'foreign' && j.networkId);
  return judged
    .filter((n) => n.kind === 'network' && n.verdict === 'live')
    .flatMap((n) => {
      const on = foreign.filter((e) => sameId(e.networkId!, n.id)).map((e) => e.name);
      return on.length > 0 ? [`${n.name}: ${on.join(', ')}`] : [];
    });
}

/** The pod's key, with its network when the node has another hcn-cni network (or its own has no conflist). */
function podLabel(p: PodAttachment, networks: readonly string[]): string {
  return networks.length > 1 || !networks.includes(p.network) ? `${p.key} on ${p.network}` : p.key;
}

/** The plan, one line per action: what a dry run prints and what the real run prints before it acts. */
export function describePlan(p: UninstallPlan): string[] {
  const lines: string[] = [];
  for (const pod of p.delPods)
    lines.push(
      `DEL pod ${podLabel(pod, p.networks)}: endpoint ${pod.endpoint.name} (${pod.endpoint.id})${
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

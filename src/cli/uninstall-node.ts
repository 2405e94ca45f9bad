/**
 * The node's hcn-cni networks as `hcn-cni uninstall` judges them: every configuration of containerd's conf directory
 * that names the plugin — not only the one install wrote: two conflists may share a state directory
 * (docs/limitations.md, "Shared state directories"), and removing the plugin removes it from all of them — the state
 * directories they name, HNS judged against each, and every pod those state directories record, each with the
 * network (and so the IPAM configuration) its DEL needs. Loaded only for `uninstall`.
 */
import * as path from 'node:path';
import { defaultStateDir } from '../cni/defaults';
import { CONFLIST_NAME } from '../install/plan';
import { InstallRefusal } from '../install/refusal';
import type { PodAttachment } from '../install/uninstall-plan';
import { audit, graceMs } from '../orphans/audit';
import type { Judged, Verdict } from '../orphans/detect';
import { ownerKey } from '../state/records';
import type { StateSnapshot, StateStore } from '../state/store';
import { hcnConfFiles, loadConf, type LoadedConf } from './operator/conf';
import { OpsContext, type OpsWriters } from './operator/context';

export interface NodeIo extends OpsWriters {
  platform: NodeJS.Platform;
  pid: number;
  now: () => number;
}

/** One hcn-cni network of the node: its configuration (from a conflist, or built-in with --state-dir) and context. */
export interface NodeNetwork {
  loaded: LoadedConf;
  ctx: OpsContext;
}

/** One state directory: the networks that name it, and what it holds (undefined when it does not exist). */
export interface StateDirView {
  stateDir: string;
  networks: NodeNetwork[];
  store?: StateStore;
  state?: StateSnapshot;
}

/**
 * Every hcn-cni configuration of the conf directory, the one install wrote first, then libcni's order. With none, the
 * state directory the pods used is unknown: the built-in default may be another installation's (or nothing's), and
 * HNS judged against it would make our live endpoints look orphaned — so only an explicit --state-dir will do.
 */
export function nodeNetworks(
  confDir: string,
  stateDir: string | undefined,
  io: NodeIo,
  dryRun: boolean,
): NodeNetwork[] {
  const files = hcnConfFiles(confDir).sort(
    (a, b) => Number(path.basename(b.file) === CONFLIST_NAME) - Number(path.basename(a.file) === CONFLIST_NAME),
  );
  const given = stateDir !== undefined ? { stateDir } : {};
  if (files.length === 0 && stateDir === undefined)
    throw new InstallRefusal(
      `no hcn-cni conflist in ${confDir}, so the state directory of the pods is not known (the built-in ${defaultStateDir(io.platform)} may be another's); nothing was changed — give --state-dir DIR, or the --conf-dir that holds the conflist`,
    );
  const configs = files.length
    ? files.map((f) => loadConf({ platform: io.platform, file: f.file, ...given }))
    : [loadConf({ platform: io.platform, confDir, ...given })];
  const args = { help: false, json: false, verbose: false, dryRun, clearQuarantine: false };
  return configs.map((loaded) => ({
    loaded,
    ctx: new OpsContext(io, args, loaded, { platform: io.platform, pid: io.pid, now: io.now }),
  }));
}

/** The networks grouped by the state directory they name, each directory's store and snapshot read once. */
export function stateDirs(networks: readonly NodeNetwork[]): StateDirView[] {
  const views = new Map<string, StateDirView>();
  for (const n of networks) {
    const key = n.ctx.conf.stateDir;
    const view = views.get(key) ?? { stateDir: key, networks: [] };
    view.networks.push(n);
    views.set(key, view);
  }
  for (const v of views.values()) {
    const first = v.networks[0]!.ctx;
    if (!first.stateDirExists()) continue;
    v.store = first.deps().stores.store(first.conf, first.log);
    v.state = v.store.snapshot();
  }
  return [...views.values()];
}

/** What stops a delete, strongest first: an object one state directory must keep is kept, whatever another says. */
const WEIGHT: Record<Verdict, number> = { protected: 4, 'in-flight': 3, live: 2, orphan: 1, foreign: 0 };

/**
 * The audit's judgement of every HNS object without deleting anything, against each state directory; an object is
 * an orphan only when no state directory claims it (another directory's pod is not this one's orphan).
 */
export async function judgeNode(views: readonly StateDirView[]): Promise<Judged[]> {
  const byId = new Map<string, Judged>();
  const keep = (j: Judged) => {
    const had = byId.get(j.id.toLowerCase());
    if (!had || WEIGHT[j.verdict] > WEIGHT[had.verdict]) byId.set(j.id.toLowerCase(), j);
  };
  for (const v of views) {
    const ctx = v.networks[0]!.ctx;
    const { api } = await ctx.api();
    if (v.store) {
      const deps = ctx.deps();
      const report = await audit({
        api,
        store: v.store,
        os: deps.hns.os(),
        log: ctx.log,
        now: deps.now,
        dryRun: true,
        graceMs: graceMs(ctx.conf.hnsTimeoutSeconds),
        adopt: [],
      });
      report.plan.judged.forEach(keep);
      continue;
    }
    const [networks, endpoints] = await Promise.all([api.listNetworks(), api.listEndpoints()]);
    for (const o of [...networks, ...endpoints]) {
      const kind = 'networkId' in o ? 'endpoint' : 'network';
      keep({ kind, id: o.id, name: o.name, verdict: 'foreign', reason: 'no state directory' });
    }
  }
  return [...byId.values()];
}

/**
 * Every pod the state directories record, with its network: the record's (a record from before records carried it
 * belongs to the first network naming the directory) and the conflist that configures it, if one still does.
 */
export function podsOf(views: readonly StateDirView[]): PodAttachment[] {
  const pods: PodAttachment[] = [];
  for (const v of views) {
    for (const r of v.state?.attachments ?? []) {
      const network = r.cniNetwork ?? v.networks[0]!.ctx.conf.name;
      const conf = v.networks.find((n) => n.ctx.conf.name === network)?.loaded;
      pods.push({
        key: ownerKey(r),
        endpoint: { id: r.endpoint.id, name: r.endpoint.name },
        addresses: ((r.result as { ips?: Array<{ address?: string }> }).ips ?? []).map((x) => String(x.address)),
        ...(r.ipamAllocated && conf?.conf.ipam?.type ? { ipam: conf.conf.ipam.type } : {}),
        network,
        ...(conf?.file !== undefined ? { conflist: conf.file } : {}),
      });
    }
  }
  return pods;
}

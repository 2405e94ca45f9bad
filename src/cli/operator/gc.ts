/**
 * `hcn-cni gc --valid FILE`: the plugin's GC (src/plugin/verbs/gc.ts) with the valid attachments from a file, and the
 * configuration's delegated IPAM (released per removed attachment, then sent GC when it speaks 1.1.0).
 *
 * FILE is a JSON list of {containerID, ifname}, or a whole CNI GC request (the object libcni sends on stdin, with
 * "cni.dev/valid-attachments" or the older "cni.dev/attachments"). The list is validated by the plugin's own parser.
 */
import { parseNetConf } from '../../cni/config';
import { splitCniPath } from '../../cni/env';
import { CniCode, isCniError } from '../../cni/cni-error';
import { createIpamClient } from '../../cni/ipam';
import type { NetConf } from '../../cni/types';
import type { EndpointInfo, NetworkInfo } from '../../hns/api';
import { gc } from '../../plugin/verbs/gc';
import { ownerKey } from '../../state/records';
import { ConfError, defaultCniBinDir, readJson } from './conf';
import { OpsError, type OpsContext } from './context';
import { describeFailure } from './describe-failure';
import { ownerOfName, plural } from './format';

const VALID_KEYS = ['cni.dev/valid-attachments', 'cni.dev/attachments'];

/** The attachment list in FILE, as the GC request's "cni.dev/valid-attachments" value (not yet validated). */
export function validListFrom(doc: unknown, file: string): unknown {
  if (Array.isArray(doc) || doc === null) return doc ?? [];
  if (typeof doc === 'object') {
    const keys = Object.keys(doc as object);
    for (const want of VALID_KEYS) {
      const k = keys.find((x) => x.toLowerCase() === want);
      if (k !== undefined) return (doc as Record<string, unknown>)[k] ?? [];
    }
  }
  throw new ConfError(
    `${file}: expected a JSON list of {"containerID", "ifname"} or a GC request with "cni.dev/valid-attachments"`,
  );
}

interface Seen {
  attachments: Set<string>;
  objects: Map<string, string>;
}

/** The GC request's configuration, with the valid list from FILE validated by the plugin's own parser. */
function gcRequest(ctx: OpsContext, file: string): { raw: Record<string, unknown>; conf: NetConf } {
  const list = validListFrom(readJson(file), file);
  const raw = {
    ...ctx.conf.raw,
    cniVersion: ctx.conf.cniVersion,
    name: ctx.conf.name,
    'cni.dev/valid-attachments': list,
  };
  let conf: NetConf;
  try {
    conf = parseNetConf(raw, { platform: ctx.platform, defaults: { stateDir: ctx.conf.stateDir }, verb: 'GC' });
  } catch (e) {
    if (isCniError(e)) throw new ConfError(`${file}: ${e.message}`);
    throw e;
  }
  conf.stateDir = ctx.conf.stateDir;
  return { raw, conf };
}

/** The configuration's delegated IPAM, sent the GC request (its DELs for single attachments use the conf's version). */
function ipamFor(ctx: OpsContext, conf: NetConf, raw: Record<string, unknown>) {
  // GC itself is a 1.1.0 verb.
  const stdin = Buffer.from(JSON.stringify({ ...raw, cniVersion: '1.1.0' }));
  const cniPath = ctx.io.env.CNI_PATH || defaultCniBinDir(ctx.platform);
  const env = { ...ctx.io.env, CNI_PATH: cniPath };
  const ipam = createIpamClient({
    conf,
    env,
    stdin,
    path: splitCniPath(cniPath, ctx.platform),
    platform: ctx.platform,
  });
  return { ipam, path: splitCniPath(cniPath, ctx.platform) };
}

/** The plugin's GC; an incomplete one reports its errors rather than failing. */
async function runPluginGc(ctx: OpsContext, conf: NetConf, { ipam, path }: ReturnType<typeof ipamFor>) {
  try {
    const report = await gc({ verb: 'GC', conf, path, ipam, log: ctx.log }, ctx.deps());
    return { removed: report.removedAttachments, errors: [] as string[], incomplete: false };
  } catch (e) {
    if (!(isCniError(e) && e.code === CniCode.GC_INCOMPLETE)) throw e;
    return { removed: [] as string[], errors: e.details ? e.details.split('\n') : [e.message], incomplete: true };
  }
}

export async function runGc(ctx: OpsContext): Promise<number> {
  const file = ctx.args.valid!;
  const { raw, conf } = gcRequest(ctx, file);
  ctx.requireStateDir('garbage-collect');
  const delegated = ipamFor(ctx, conf, raw);
  const { api } = await ctx.api();
  const before = await seen(ctx, api.listNetworks(), api.listEndpoints());
  const ran = await runPluginGc(ctx, conf, delegated);
  const { errors } = ran;
  const { ipam } = delegated;
  let removed = ran.removed;
  let after: Seen | undefined;
  try {
    after = await seen(ctx, api.listNetworks(), api.listEndpoints());
  } catch (e) {
    errors.push(
      `listing HNS after GC: ${describeFailure(e, { platform: ctx.platform, hcnSim: ctx.io.env.HCN_SIM, verbose: false })}`,
    );
  }
  if (ran.incomplete && after) removed = [...before.attachments].filter((k) => !after!.attachments.has(k));
  const deleted = after
    ? [...before.objects].filter(([id]) => !after!.objects.has(id)).map(([id, what]) => ({ id, what }))
    : [];
  const valid = conf.validAttachments!;
  const summary = `gc: ${plural(valid.length, 'valid attachment')}; removed ${plural(removed.length, 'attachment')}, deleted ${plural(deleted.length, 'HNS object')}, ${plural(errors.length, 'error')}`;
  if (ctx.args.json) {
    ctx.json({
      valid: valid.map(ownerKey),
      removedAttachments: removed,
      deletedObjects: deleted.map((d) => ({ id: d.id, object: d.what })),
      errors,
      ipam: ipam.configured ? ipam.type : null,
      summary,
    });
  } else {
    if (valid.length === 0) ctx.out('note: the valid list is empty: every attachment of this node counted as gone\n');
    for (const r of removed) ctx.out(`removed attachment ${r}\n`);
    for (const d of deleted) ctx.out(`deleted ${d.what} (${d.id})\n`);
    for (const err of errors) ctx.out(`ERROR ${err}\n`);
    ctx.out(`${summary}\n`);
  }
  if (errors.length > 0) throw new OpsError(`GC finished with ${plural(errors.length, 'error')} (see above)`);
  return 0;
}

/** Attachments on disk and our objects in HNS, to report what GC took away. */
async function seen(ctx: OpsContext, nets: Promise<NetworkInfo[]>, eps: Promise<EndpointInfo[]>): Promise<Seen> {
  const [n, e] = await Promise.all([nets, eps]);
  const objects = new Map<string, string>();
  for (const x of n) if (ownerOfName(x.name)) objects.set(x.id.toLowerCase(), `network ${x.name}`);
  for (const x of e) if (ownerOfName(x.name)) objects.set(x.id.toLowerCase(), `endpoint ${x.name}`);
  const state = ctx.deps().stores.store(ctx.conf, ctx.log).snapshot();
  return { attachments: new Set(state.attachments.map(ownerKey)), objects };
}

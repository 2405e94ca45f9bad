/**
 * `hcn-cni audit [--dry-run]`: the leak audit the plugin runs in ADD and GC (src/orphans/audit.ts), on demand. Every
 * HNS network and endpoint is listed with its verdict and the reason; orphans are deleted unless --dry-run.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Judged, Verdict } from '../../orphans/detect';
import { audit } from '../../orphans/audit';
import { graceMs } from '../../orphans/audit';
import { OpsError, type OpsContext } from './context';
import { ownerText, plural, table } from './format';

const ORDER: Verdict[] = ['orphan', 'protected', 'in-flight', 'live', 'foreign'];

function objectJson(j: Judged): Record<string, unknown> {
  return {
    kind: j.kind,
    id: j.id,
    name: j.name,
    verdict: j.verdict,
    reason: j.reason,
    owner: j.owner ? { ...j.owner, ...(j.mac ? { mac: j.mac } : {}) } : j.ownerTag ? { tag: j.ownerTag } : null,
    ...(j.networkId ? { networkId: j.networkId } : {}),
    ...(j.namespaceId ? { namespaceId: j.namespaceId } : {}),
    ...(j.adapterName ? { adapterName: j.adapterName } : {}),
  };
}

export async function runAudit(ctx: OpsContext): Promise<number> {
  const dryRun = ctx.args.dryRun;
  const notes: string[] = [];
  let stateDir = ctx.conf.stateDir;
  let scratch: string | undefined;
  if (!ctx.stateDirExists()) {
    if (!dryRun) ctx.requireStateDir('delete anything');
    // Judge against an empty state without creating the real directory (a later real audit must still refuse it).
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-cni-audit-'));
    stateDir = scratch;
    notes.push(`the state directory ${ctx.conf.stateDir} does not exist: judged as if it were empty`);
  }
  try {
    const { api, version } = await ctx.api();
    const rt = ctx.rt();
    const store = rt.store({ stateDir }, ctx.log);
    const report = await audit({
      api,
      store,
      os: rt.os(),
      log: ctx.log,
      now: rt.now,
      dryRun,
      graceMs: graceMs(ctx.conf.hnsTimeoutSeconds),
      adopt: ctx.conf.adopt,
    });
    const judged = [...report.plan.judged].sort(
      (a, b) =>
        ORDER.indexOf(a.verdict) - ORDER.indexOf(b.verdict) ||
        a.kind.localeCompare(b.kind) ||
        a.name.localeCompare(b.name),
    );
    const condemned = [...report.plan.endpoints, ...report.plan.networks];
    const deleted = report.sweep?.deleted ?? [];
    const skipped = report.sweep?.skipped ?? [];
    const failed = report.sweep?.failed ?? [];
    const total = judged.length;
    const counts = ORDER.slice()
      .reverse()
      .map((v) => `${report.counts[v]} ${v}`)
      .join(', ');
    const outcome = dryRun
      ? `dry run: would delete ${condemned.length}, deleted nothing`
      : `deleted ${deleted.length}${skipped.length ? `, skipped ${skipped.length}` : ''}${failed.length ? `, failed ${failed.length}` : ''}`;
    const summary = `audit: ${plural(total, 'object')} (${counts}); ${outcome}`;

    if (ctx.args.json) {
      ctx.json({
        dryRun,
        apiVersion: version,
        stateDir: ctx.conf.stateDir,
        objects: judged.map(objectJson),
        counts: report.counts,
        wouldDelete: dryRun ? condemned.map(objectJson) : [],
        deleted: deleted.map(objectJson),
        skipped: skipped.map((s) => ({ ...objectJson(s.object), skipReason: s.reason })),
        failed: failed.map((f) => ({ ...objectJson(f.object), error: f.error })),
        notes,
        durationMs: report.durationMs,
        summary,
      });
    } else {
      for (const n of notes) ctx.out(`note: ${n}\n`);
      if (total === 0) ctx.out('no HNS networks or endpoints\n');
      else {
        ctx.out(
          table(
            ['VERDICT', 'KIND', 'NAME', 'ID', 'OWNER', 'REASON'],
            judged.map((j) => [
              j.verdict,
              j.kind,
              j.name,
              j.id,
              ownerText(j.owner ?? (j.ownerTag ? { tag: j.ownerTag } : undefined)),
              j.reason,
            ]),
          ),
        );
      }
      if (dryRun) for (const j of condemned) ctx.out(`would delete ${j.kind} ${j.name} (${j.id})\n`);
      for (const j of deleted) ctx.out(`deleted ${j.kind} ${j.name} (${j.id})\n`);
      for (const s of skipped) ctx.out(`skipped ${s.object.kind} ${s.object.name} (${s.object.id}): ${s.reason}\n`);
      for (const f of failed)
        ctx.out(`FAILED to delete ${f.object.kind} ${f.object.name} (${f.object.id}): ${f.error}\n`);
      ctx.out(`${summary}\n`);
    }
    if (failed.length > 0) throw new OpsError(`${plural(failed.length, 'orphan')} could not be deleted (see above)`);
    return 0;
  } finally {
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  }
}

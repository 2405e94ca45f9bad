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

type AuditReport = Awaited<ReturnType<typeof audit>>;

/** The audit's report laid out for the operator: objects by verdict, what it deleted or would, and a summary. */
function outcomeOf(report: AuditReport, dryRun: boolean) {
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
  const counts = ORDER.slice()
    .reverse()
    .map((v) => `${report.counts[v]} ${v}`)
    .join(', ');
  const outcome = dryRun
    ? `dry run: would delete ${condemned.length}, deleted nothing`
    : `deleted ${deleted.length}${skipped.length ? `, skipped ${skipped.length}` : ''}${failed.length ? `, failed ${failed.length}` : ''}`;
  const summary = `audit: ${plural(judged.length, 'object')} (${counts}); ${outcome}`;
  return { judged, condemned, deleted, skipped, failed, summary };
}

type Outcome = ReturnType<typeof outcomeOf>;

function auditJson(
  o: Outcome,
  report: AuditReport,
  x: { dryRun: boolean; version: unknown; stateDir: string; notes: string[] },
): Record<string, unknown> {
  return {
    dryRun: x.dryRun,
    apiVersion: x.version,
    stateDir: x.stateDir,
    objects: o.judged.map(objectJson),
    counts: report.counts,
    wouldDelete: x.dryRun ? o.condemned.map(objectJson) : [],
    deleted: o.deleted.map(objectJson),
    skipped: o.skipped.map((s) => ({ ...objectJson(s.object), skipReason: s.reason })),
    failed: o.failed.map((f) => ({ ...objectJson(f.object), error: f.error })),
    notes: x.notes,
    durationMs: report.durationMs,
    summary: o.summary,
  };
}

function printAudit(ctx: OpsContext, o: Outcome, notes: readonly string[], dryRun: boolean): void {
  for (const n of notes) ctx.out(`note: ${n}\n`);
  if (o.judged.length === 0) ctx.out('no HNS networks or endpoints\n');
  else {
    ctx.out(
      table(
        ['VERDICT', 'KIND', 'NAME', 'ID', 'OWNER', 'REASON'],
        o.judged.map((j) => [
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
  if (dryRun) for (const j of o.condemned) ctx.out(`would delete ${j.kind} ${j.name} (${j.id})\n`);
  for (const j of o.deleted) ctx.out(`deleted ${j.kind} ${j.name} (${j.id})\n`);
  for (const s of o.skipped) ctx.out(`skipped ${s.object.kind} ${s.object.name} (${s.object.id}): ${s.reason}\n`);
  for (const f of o.failed)
    ctx.out(`FAILED to delete ${f.object.kind} ${f.object.name} (${f.object.id}): ${f.error}\n`);
  ctx.out(`${o.summary}\n`);
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
    const deps = ctx.deps();
    const report = await audit({
      api,
      store: deps.stores.store({ stateDir }, ctx.log),
      os: deps.hns.os(),
      log: ctx.log,
      now: deps.now,
      dryRun,
      graceMs: graceMs(ctx.conf.hnsTimeoutSeconds),
      adopt: ctx.conf.adopt,
    });
    const o = outcomeOf(report, dryRun);
    if (ctx.args.json) ctx.json(auditJson(o, report, { dryRun, version, stateDir: ctx.conf.stateDir, notes }));
    else printAudit(ctx, o, notes, dryRun);
    if (o.failed.length > 0)
      throw new OpsError(`${plural(o.failed.length, 'orphan')} could not be deleted (see above)`);
    return 0;
  } finally {
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  }
}

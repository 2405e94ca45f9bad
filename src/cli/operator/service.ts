/**
 * `hcn-cni service`: is the service behind the shim running, and what is it doing. Asks the service itself
 * (KIND_STATUS on the same socket or pipe the shim uses); when nothing answers, the shim is running every request
 * through the standalone executable, which is said plainly and gives exit 1 (usable as a liveness probe).
 */
import { defaultServiceAddress, queryStatus } from '../../service/transport/client';
import type { ServiceStatus } from '../../service/service';
import { judgeProbe } from '../../service/observability/probes';
import type { OpsContext } from './context';
import { table } from './format';

type TallyRepairs = ServiceStatus['tally']['repairs'];

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

function describe(s: ServiceStatus): string {
  const lines = [
    `service: running at ${s.address} (pid ${s.pid}, protocol ${s.protocol}, up ${seconds(s.uptimeMs)} since ${s.startedAt})`,
    s.confDir
      ? `conf dir: ${s.confDir}`
      : 'conf dir: none given (a network is served once a verb of its own arrived; serve --conf-dir)',
    `requests: ${s.served} served, ${s.refused} refused, ${s.failed} failed, ${s.inFlight.length} in flight`,
    `not run (shim gone before the request started): ${s.notRun ?? 0}; connections closed unread: ${s.timedOut ?? 0} too slow, ${s.tooMany ?? 0} over the limit; ${s.pendingConnections ?? 0} reading now; log files open: ${s.logFilesOpen ?? 0}`,
  ];
  // A service from before the abandoned-call bound says nothing of them.
  const a = s.abandoned as ServiceStatus['abandoned'] | undefined;
  if (a) {
    lines.push(
      `abandoned HCN calls: ${a.count} (past their timeout, still unanswered by HNS; at ${a.bound} the service stops accepting and exits to be restarted)`,
    );
    if (a.byOp.length > 0) {
      const rows = a.byOp.map((o) => [o.op, String(o.count), seconds(o.oldestAgeMs), seconds(o.newestAgeMs)]);
      lines.push('', ...rowsOf(['abandoned call', 'count', 'oldest', 'newest'], rows));
    }
  }
  // A service from before the tally says nothing of its counts.
  const t = s.tally as ServiceStatus['tally'] | undefined;
  if (t) lines.push(...counted(t, s.metricsUrl));
  lines.push(...podHealth(s.agent));
  if (s.inFlight.length > 0) {
    const rows = s.inFlight.map((r) => [
      String(r.id),
      r.verb,
      r.state,
      seconds(r.ageMs),
      r.containerId ? `${r.containerId} / ${r.ifname ?? ''}` : '-',
      r.shimConnected ? 'waiting' : r.state === 'queued' ? 'gone (will not run)' : 'gone (finishing anyway)',
    ]);
    lines.push('', ...rowsOf(['id', 'verb', 'state', 'age', 'container / ifname', 'shim'], rows));
  }
  return `${lines.join('\n')}\n`;
}

/** Each served network's pods by health (the node agent's last check), naming the pods that lack their network. */
function podHealth(agent: ServiceStatus['agent'] | undefined): string[] {
  // A service from before the health check says nothing of it.
  if (!agent?.health) return [];
  const lines: string[] = [];
  for (const n of agent.health) {
    const c = n.counts;
    lines.push(
      `pods of ${n.network} (${n.stateDir}): ${c.healthy} healthy, ${c['endpoint-missing']} endpoint missing, ${c['not-attached']} not attached, ${c['hns-failed']} failed in HNS (checked ${n.checkedAt})`,
    );
    for (const p of n.unhealthy) {
      const b = p.repairBackoff;
      const backoff = b
        ? `; repair failed ${b.failures} time(s), last ${b.lastOutcome}: sits out ${b.passesLeft} more pass(es)`
        : '';
      lines.push(`  ${p.attachment}: ${p.problem}${p.detail ? ` (${p.detail})` : ''}${backoff}`);
    }
  }
  for (const u of agent.unserved ?? []) {
    lines.push(
      `network ${u.network} (${u.stateDir}): no configuration served here; ${u.attachments} pod(s) not checked or repaired, ${u.keptIps} kept IP(s) not released`,
    );
  }
  return lines.length > 0 ? ['', ...lines] : [];
}

/** A table's lines, each column as wide as its widest cell (an HNSCall route is longer than any HCN name). */
function rowsOf(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  return table(headers, rows).trimEnd().split('\n');
}

function ms(seconds: number, count: number): string {
  return count > 0 ? `${((seconds / count) * 1000).toFixed(1)}ms` : '-';
}

/** The counts the service's metrics carry (src/service/observability/tally.ts), compactly. */
function counted(t: ServiceStatus['tally'], url: string | undefined): string[] {
  const lines = [
    '',
    `metrics: ${url ?? 'off (hcn-cni serve --metrics HOST:PORT serves them)'}`,
    `audits: ${t.audits}; verdicts: ${
      Object.entries(t.verdicts)
        .map(([v, n]) => `${v} ${n}`)
        .join(', ') || 'none'
    }; removed: ${t.removed.network ?? 0} networks, ${t.removed.endpoint ?? 0} endpoints (${t.removeFailures} failed)`,
    `repairs: ${
      // A service from before the repairs were counted has none.
      Object.entries((t.repairs as TallyRepairs | undefined) ?? {})
        .map(([o, n]) => `${o} ${n}`)
        .join(', ') || 'none'
    }`,
  ];
  if (t.verbs.length > 0) {
    const rows = t.verbs.map((v) => [v.verb, v.code, String(v.count), ms(v.seconds, v.count)]);
    lines.push('', ...rowsOf(['verb', 'code', 'count', 'mean'], rows));
  }
  if (t.hnsCalls.length > 0) {
    const rows = t.hnsCalls.map((c) => [c.op, String(c.count), String(c.errors), ms(c.seconds, c.count)]);
    lines.push('', ...rowsOf(['HNS call', 'count', 'errors', 'mean'], rows));
  }
  if (t.hnsErrors.length > 0) {
    const rows = t.hnsErrors.map((e) => [e.op, e.hresult, String(e.count)]);
    lines.push('', ...rowsOf(['HNS error', 'hresult', 'count'], rows));
  }
  return lines;
}

export async function runService(ctx: OpsContext): Promise<number> {
  const address = ctx.args.service ?? (ctx.io.env.HCN_CNI_SERVICE || defaultServiceAddress(ctx.platform));
  let status: ServiceStatus;
  try {
    status = await queryStatus(address);
  } catch (e) {
    const reason = (e as Error).message;
    if (ctx.args.probe) {
      ctx.io.out(`${ctx.args.probe}: failed: no service at ${address} (${reason})\n`);
      return 1;
    }
    if (ctx.args.json) ctx.io.out(`${JSON.stringify({ running: false, address, reason })}\n`);
    else
      ctx.io.out(
        `service: not running at ${address} (${reason}); the shim runs each request with hcn-cni-standalone\n`,
      );
    return 1;
  }
  if (ctx.args.probe) {
    const v = judgeProbe(ctx.args.probe, status, ctx.io.env.HCN_CNI_POD_UID || undefined);
    ctx.io.out(`${ctx.args.probe}: ${v.ok ? 'ok' : 'failed'}: ${v.reason}\n`);
    return v.ok ? 0 : 1;
  }
  ctx.io.out(ctx.args.json ? `${JSON.stringify({ running: true, ...status })}\n` : describe(status));
  return 0;
}

/**
 * `hcn-cni service`: is the service behind the shim running, and what is it doing. Asks the service itself
 * (KIND_STATUS on the same socket or pipe the shim uses); when nothing answers, the shim is running every request
 * through the standalone executable, which is said plainly and gives exit 1 (usable as a liveness probe).
 */
import { defaultServiceAddress, queryStatus } from '../../service/client';
import type { ServiceStatus } from '../../service/service';
import { judgeProbe } from '../../service/health';
import type { OpsContext } from './context';

type TallyRepairs = ServiceStatus['tally']['repairs'];

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

function describe(s: ServiceStatus): string {
  const lines = [
    `service: running at ${s.address} (pid ${s.pid}, protocol ${s.protocol}, up ${seconds(s.uptimeMs)} since ${s.startedAt})`,
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
      lines.push('', 'abandoned call                          count   oldest   newest');
      for (const o of a.byOp) {
        lines.push(
          `${o.op.padEnd(40)}${String(o.count).padEnd(8)}${seconds(o.oldestAgeMs).padEnd(9)}${seconds(o.newestAgeMs)}`,
        );
      }
    }
  }
  // A service from before the tally says nothing of its counts.
  const t = s.tally as ServiceStatus['tally'] | undefined;
  if (t) lines.push(...counted(t, s.metricsUrl));
  if (s.inFlight.length > 0) {
    lines.push('', 'id      verb    state    age      container / ifname                        shim');
    for (const r of s.inFlight) {
      const who = r.containerId ? `${r.containerId} / ${r.ifname ?? ''}` : '-';
      lines.push(
        `${String(r.id).padEnd(8)}${r.verb.padEnd(8)}${r.state.padEnd(9)}${seconds(r.ageMs).padEnd(9)}${who.padEnd(42)}${r.shimConnected ? 'waiting' : r.state === 'queued' ? 'gone (will not run)' : 'gone (finishing anyway)'}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

function ms(seconds: number, count: number): string {
  return count > 0 ? `${((seconds / count) * 1000).toFixed(1)}ms` : '-';
}

/** The counts the service's metrics carry (src/service/tally.ts), compactly. */
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
    lines.push('', 'verb     code     count   mean');
    for (const v of t.verbs)
      lines.push(`${v.verb.padEnd(9)}${v.code.padEnd(9)}${String(v.count).padEnd(8)}${ms(v.seconds, v.count)}`);
  }
  if (t.hnsCalls.length > 0) {
    lines.push('', 'HNS call                                count   errors  mean');
    for (const c of t.hnsCalls)
      lines.push(
        `${c.op.padEnd(40)}${String(c.count).padEnd(8)}${String(c.errors).padEnd(8)}${ms(c.seconds, c.count)}`,
      );
  }
  if (t.hnsErrors.length > 0) {
    lines.push('', 'HNS error                               hresult     count');
    for (const e of t.hnsErrors) lines.push(`${e.op.padEnd(40)}${e.hresult.padEnd(12)}${e.count}`);
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
    const v = judgeProbe(ctx.args.probe, status);
    ctx.io.out(`${ctx.args.probe}: ${v.ok ? 'ok' : 'failed'}: ${v.reason}\n`);
    return v.ok ? 0 : 1;
  }
  ctx.io.out(ctx.args.json ? `${JSON.stringify({ running: true, ...status })}\n` : describe(status));
  return 0;
}

/**
 * The resident service (where the doctor asked it): not running is only said (the shim then runs every request
 * standalone, which works); HNS seen failing, HCN calls abandoned past their timeout, and networks with records no
 * configuration of the service names are findings of their own.
 */
import type { Finding } from './finding';
import type { DoctorSnapshot } from './snapshot';

export function checkService(s: DoctorSnapshot): Finding[] {
  const v = s.service;
  if (!v) return [];
  if (!v.running) {
    return [
      {
        kind: 'service',
        severity: 'info',
        subject: 'service',
        why: `not running at ${v.address} (${v.reason ?? 'no answer'}); the shim runs each request with hcn-cni-standalone`,
        next: "hcn-cni service; start it (hcn-cni serve, or the DaemonSet) for the node agent's audits and repairs",
        detail: { address: v.address },
      },
    ];
  }
  const out: Finding[] = [
    {
      kind: 'service',
      severity: 'info',
      subject: 'service',
      why: `running at ${v.address} (pid ${v.pid}); ${v.requests?.queued ?? 0} queued, ${v.requests?.running ?? 0} running; last audit ${v.lastAuditAt ?? 'none yet'}; ${v.confDir ? `conf dir ${v.confDir}` : 'no conf dir (a network is served once a verb of its own arrived)'}`,
      next: 'hcn-cni service',
      detail: { address: v.address, pid: v.pid, ...(v.confDir ? { confDir: v.confDir } : {}) },
    },
  ];
  if (v.hnsFailingSince) {
    out.push({
      kind: 'service',
      severity: 'error',
      subject: 'service: HNS health',
      why: `the service has seen HNS failing since ${v.hnsFailingSince}`,
      next: 'Get-Service hns; hcn-cni version',
    });
  }
  if (v.abandoned && v.abandoned.count > 0) {
    out.push({
      kind: 'service',
      severity: 'warning',
      subject: 'service: abandoned HCN calls',
      why: `${v.abandoned.count} HCN call(s) past their timeout are still unanswered by HNS (at ${v.abandoned.bound} the service restarts)`,
      next: 'hcn-cni service (which calls, how old); Get-Service hns',
    });
  }
  for (const u of v.unserved ?? []) {
    out.push({
      kind: 'service',
      severity: 'warning',
      subject: `service: network ${u.network}`,
      why: `${u.attachments} pod(s) and ${u.keptIps} kept IP(s) in ${u.stateDir} belong to a network no configuration in the conf dir names: not checked, repaired or released`,
      next: 'hcn-cni service; put its conflist back in the CNI configuration directory',
    });
  }
  return out;
}

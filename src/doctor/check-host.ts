/**
 * The host as the plugin sees it — OS build, HNS version, the HNS features the plugin uses that this host has, the
 * API "apiVersion" chooses — said once as information; an addon that did not load or an HNS that did not answer is
 * an error, since nothing else can be judged then.
 */
import type { Finding } from './finding';
import type { DoctorSnapshot } from './snapshot';

export function checkHost(s: DoctorSnapshot): Finding[] {
  const h = s.host;
  const out: Finding[] = [
    {
      kind: 'host',
      severity: 'info',
      subject: 'host',
      why: `${h.platform}${h.build ? ` build ${h.build}` : ''}, hcn-cni ${h.plugin}, HNS ${h.hnsVersion ?? 'version unknown'}, features: ${h.features.join(', ') || 'none known'}; API: ${h.api ? `v${h.api.version} (${h.api.reason})` : 'not chosen'}; configuration: ${h.confSource}`,
      next: 'hcn-cni version',
      detail: { ...h },
    },
  ];
  if (h.error) {
    out.push({ kind: 'host', severity: 'error', subject: 'host: addon', why: h.error, next: 'hcn-cni version' });
  } else if (s.hnsError) {
    out.push({
      kind: 'hns-unreachable',
      severity: 'error',
      subject: 'HNS',
      why: `HNS could not be read: ${s.hnsError.split('\n')[0]}`,
      next: 'Get-Service hns; hcn-cni version',
    });
  }
  return out;
}

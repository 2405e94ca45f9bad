/**
 * The doctor's report as a person and a machine read it (text, JSON), and the service address it asks: shared by
 * `hcn-cni doctor` (doctor.ts) and its support bundle (doctor-bundle.ts), which doctor.ts loads only with --bundle.
 */
import type { Finding } from '../doctor/finding';
import type { OpsContext } from './operator/context';

/** The service the doctor asks: --service, else HCN_CNI_SERVICE, else the platform's default. */
export function serviceAddress(ctx: OpsContext, given: string | undefined): Promise<string> {
  return import('../service/transport/client').then(
    ({ defaultServiceAddress }) => given ?? (ctx.io.env.HCN_CNI_SERVICE || defaultServiceAddress(ctx.platform)),
  );
}

const ORDER = ['error', 'warning', 'info'] as const;

export function sortFindings(findings: readonly Finding[]): Finding[] {
  return [...findings].sort((a, b) => ORDER.indexOf(a.severity) - ORDER.indexOf(b.severity));
}

export function renderFindings(findings: readonly Finding[]): string {
  const lines: string[] = [];
  for (const f of sortFindings(findings)) {
    lines.push(
      `${f.severity.toUpperCase().padEnd(7)} ${f.kind}: ${f.subject}`,
      `        why:  ${f.why}`,
      `        next: ${f.next}`,
    );
  }
  lines.push(summaryLine(findings));
  return `${lines.join('\n')}\n`;
}

export function summaryLine(findings: readonly Finding[]): string {
  const n = (s: string) => findings.filter((f) => f.severity === s).length;
  return `doctor: ${n('error')} error(s), ${n('warning')} warning(s), ${n('info')} info`;
}

export function reportJson(findings: readonly Finding[], exitCode: number): Record<string, unknown> {
  const count = (s: string) => findings.filter((f) => f.severity === s).length;
  return {
    findings: sortFindings(findings),
    counts: { error: count('error'), warning: count('warning'), info: count('info') },
    exitCode,
  };
}

/**
 * What the doctor says about the node: findings, each with a severity, a one-line why and what to run next. The
 * kinds are listed once here (the node agent's metric labels come from this list); each check (check-*.ts) makes
 * the findings of its own kinds, from the snapshot alone.
 */
export const SEVERITIES = ['info', 'warning', 'error'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const FINDING_KINDS = [
  'duplicate-ip',
  'endpoint-unattached',
  'endpoint-namespace-gone',
  'endpoint-failed',
  'network-adapter-missing',
  'network-adapter-changed',
  'pod-endpoint-missing',
  'pod-not-attached',
  'pod-drift',
  'pod-gone',
  'audit-orphan',
  'audit-protected',
  'record-quarantined',
  'housekeeping-failed',
  'address-kept',
  'service',
  'hns-unreachable',
  'host',
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

export interface Finding {
  kind: FindingKind;
  severity: Severity;
  /** What it is about: "endpoint <name> (<id>)", "pod <containerId>/<ifname>", "service", … */
  subject: string;
  /** One line: what is wrong (or, for info, what is so). */
  why: string;
  /** What to run next. */
  next: string;
  /** Ids and values behind the why, for --json. */
  detail?: Record<string, unknown>;
}

/** The worst severity among the findings; undefined when there are none. */
export function worstSeverity(findings: readonly Finding[]): Severity | undefined {
  let worst = -1;
  for (const f of findings) worst = Math.max(worst, SEVERITIES.indexOf(f.severity));
  return worst < 0 ? undefined : SEVERITIES[worst];
}

/** The doctor's exit status: 0 nothing worse than info, 1 a warning, 2 an error. */
export function exitCodeOf(findings: readonly Finding[]): 0 | 1 | 2 {
  const worst = worstSeverity(findings);
  return worst === 'error' ? 2 : worst === 'warning' ? 1 : 0;
}

/** Findings counted by kind and severity (every pair, 0 where none): the node agent's gauge. */
export function countFindings(
  findings: readonly Finding[],
): Array<{ kind: FindingKind; severity: Severity; count: number }> {
  const counts = new Map<string, number>();
  for (const f of findings) counts.set(`${f.kind}\0${f.severity}`, (counts.get(`${f.kind}\0${f.severity}`) ?? 0) + 1);
  return FINDING_KINDS.flatMap((kind) =>
    SEVERITIES.map((severity) => ({ kind, severity, count: counts.get(`${kind}\0${severity}`) ?? 0 })),
  );
}

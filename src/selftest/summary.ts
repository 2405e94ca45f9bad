/**
 * The self-test's report for people: one line per step, what the host showed of the things the plugin must not
 * assume (the case of the ids HNS answers, its version), and the verdict.
 */
import type { SelftestReport, StepRecord } from './report';
import { at } from './expect';

/** "lower", "upper" or "mixed": how a GUID is written. */
export function idCase(id: string): 'lower' | 'upper' | 'mixed' {
  if (id === id.toLowerCase()) return 'lower';
  if (id === id.toUpperCase()) return 'upper';
  return 'mixed';
}

function stepLine(s: StepRecord): string {
  const mark = s.skipped ? 'SKIP' : s.pass ? 'ok  ' : 'FAIL';
  const got = s.answer.ok ? '' : ` (${s.answer.hex} ${s.answer.code})`;
  return `${mark} ${s.name}${s.pass ? got : `: ${s.problem}`}\n`;
}

function observations(r: SelftestReport): string[] {
  const notes: string[] = [];
  const version = r.steps.find((s) => s.name === 'hns-version');
  if (version?.answer.ok)
    notes.push(`HNS version ${String(at(version.answer.value, 'Major'))}.${String(at(version.answer.value, 'Minor'))}`);
  for (const name of ['endpoint-create', 'endpoint-query-upper-case-id', 'v1-endpoint']) {
    const s = r.steps.find((x) => x.name === name);
    const id = s?.answer.ok ? at(s.answer.value, 'ID') : undefined;
    if (typeof id === 'string') notes.push(`${name} answered the id in ${idCase(id)} case (${id})`);
  }
  if (!r.host.capabilities.optional.includes('HcnRegisterServiceCallback'))
    notes.push('this host has no HCN service notifications: not tested');
  if (!r.host.capabilities.v1Supported) notes.push('this host has no HNSCall (v1): its views were not tested');
  return notes;
}

export function summarise(r: SelftestReport): string {
  const failed = r.steps.filter((s) => !s.pass);
  const lines = [
    `self-test on ${r.network.kind === 'own' ? `a NAT network of its own (${r.network.subnet})` : `network "${r.network.name}"`}` +
      `${r.address.ip ? `, address ${r.address.ip} (${r.address.from})` : ''}\n`,
    ...r.steps.map(stepLine),
    ...observations(r).map((n) => `note: ${n}\n`),
    ...r.cleanupProblems.map((p) => `LEFT: ${p}\n`),
    r.passed
      ? `selftest: ${r.steps.length} steps, every answer as the plugin relies on; nothing left behind\n`
      : `selftest: ${failed.length} of ${r.steps.length} steps differ from what the plugin relies on` +
        `${r.cleanupProblems.length ? `; ${r.cleanupProblems.length} object(s) could not be removed (the audit will)` : ''}\n`,
  ];
  return lines.join('');
}

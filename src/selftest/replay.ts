/**
 * `hcn-sim compare`: a host's self-test report replayed on the simulator, call by call, each answer compared by shape
 * and code with the host's (shape.ts). The configured network the host's run used is recreated first from the
 * document the host gave (same id, name, type, subnets, adapter), since the simulator starts without it; objects the
 * replay creates are deleted at its end.
 */
import { isNotFound } from '../hns/hcn-error';
import { answerOf, invoke, type HnsCallRecord, type SelftestHns } from './calls';
import type { SelftestReport } from './report';
import { compareAnswers, IdMap, type Difference } from './shape';

export interface Fixture {
  /** Adapters the simulated host needs (the one the configured network binds). */
  adapters: Array<{ Name: string; MacAddress: string }>;
  network?: { settings: Record<string, unknown>; id: string };
}

/** What the simulator must hold before the replay: the host's configured network, as HNS described it. */
export function fixtureOf(report: SelftestReport): Fixture {
  const doc = report.network.document as Record<string, unknown> | undefined;
  if (report.network.kind !== 'configured' || !doc || typeof doc.ID !== 'string') return { adapters: [] };
  const settings: Record<string, unknown> = {};
  for (const k of ['Name', 'Type', 'Flags', 'Ipams', 'Policies']) if (doc[k] !== undefined) settings[k] = doc[k];
  const policies = Array.isArray(doc.Policies) ? (doc.Policies as Array<Record<string, unknown>>) : [];
  const adapter = policies.find((p) => p.Type === 'NetAdapterName')?.Settings as
    { NetworkAdapterName?: unknown } | undefined;
  const name = typeof adapter?.NetworkAdapterName === 'string' ? adapter.NetworkAdapterName : undefined;
  return {
    // A locally administered MAC: the host's adapter MAC is not in the report, and nothing compares it.
    adapters: name ? [{ Name: name, MacAddress: '02-15-5D-00-00-01' }] : [],
    network: { settings, id: doc.ID },
  };
}

export interface ReplayOutcome {
  compared: number;
  skipped: number;
  differences: Difference[];
}

const CREATES = new Set(['createNamespace', 'createEndpoint', 'createNetwork']);

export async function replay(report: SelftestReport, hns: SelftestHns): Promise<ReplayOutcome> {
  const ids = new IdMap();
  const made: Array<{ fn: string; id: string }> = [];
  const out: ReplayOutcome = { compared: 0, skipped: 0, differences: [] };
  for (const step of report.steps) {
    if (step.skipped) {
      out.skipped++;
      continue;
    }
    const call = { fn: step.call.fn, args: ids.translateArgs(step.call.args) as unknown[] };
    const answer = await answerOf(invoke(hns, call));
    const focus = step.focus ? { host: step.focus, sim: ids.translate(step.focus) } : undefined;
    out.differences.push(...compareAnswers(step.name, step.answer, answer, ids, focus));
    out.compared++;
    const id = answer.ok ? (answer.value as { ID?: unknown } | null)?.ID : undefined;
    if (CREATES.has(call.fn) && typeof id === 'string') made.push({ fn: call.fn, id });
  }
  await removeMade(hns, made);
  return out;
}

/**
 * Endpoints, then namespaces, then networks: whatever the replayed calls left. Through the self-test's own call table
 * (calls.ts): these are its objects on a simulator, deleted as the self-test's cleanup deletes them.
 */
async function removeMade(hns: SelftestHns, made: Array<{ fn: string; id: string }>): Promise<void> {
  const order: Array<[string, HnsCallRecord['fn']]> = [
    ['createEndpoint', 'deleteEndpoint'],
    ['createNamespace', 'deleteNamespace'],
    ['createNetwork', 'deleteNetwork'],
  ];
  for (const [created, remove] of order)
    for (const m of made.filter((x) => x.fn === created))
      await invoke(hns, { fn: remove, args: [m.id] }).catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
}

export function describeDifference(d: Difference): string {
  const where = d.path === '' ? '' : ` ${d.path}:`;
  const what: Record<Difference['kind'], string> = {
    outcome: `host ${d.host}, the simulator ${d.sim}`,
    code: `error code: host ${d.host}, simulator ${d.sim}`,
    type: `type: host ${d.host}, simulator ${d.sim}`,
    form: `form: host ${d.host}, simulator ${d.sim}`,
    'missing-in-sim': `the host answers this key (${d.host}), the simulator does not`,
    'missing-on-host': `the simulator answers this key (${d.sim}), the host does not`,
    empty: `host ${d.host}, simulator ${d.sim}`,
  };
  return `${d.step}:${where} ${what[d.kind]}`;
}

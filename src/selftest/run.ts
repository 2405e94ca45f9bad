/**
 * Runs a self-test plan (plan.ts) over narrow dependencies, in the order a pod's ADD keeps: the claim (the intent a
 * pod's ADD writes, naming every object by the id it will ask for) before anything is created, the address from
 * IPAM after it, then the steps. Whatever happens, the cleanup deletes what the steps left (its own ids only), the
 * address is released once the endpoint is gone, and the claim dropped last — so a run killed anywhere leaves a dead
 * intent the audit and GC finish from, exactly as for a pod.
 */
import type { PlannedObject } from '../state/records';
import { answerOf, invoke, type SelftestHns } from './calls';
import { at, problemWith, resolve, type Bound } from './expect';
import type { SelftestPlan, Step } from './plan';
import type { StepRecord } from './report';
import { NOT_FOUND_HRESULTS } from '../hns/hcn-error';
import { HR } from '../hns/hresults';

export interface SelftestDeps {
  hns: SelftestHns;
  claims: {
    /** Writes the intent before the first create. */
    claim(planned: PlannedObject[]): Promise<void>;
    /** HNS gave an object another id than asked: the claim follows it at once (src/plugin/claim.ts keepClaim). */
    follow(planned: PlannedObject[]): Promise<void>;
    drop(): Promise<void>;
  };
  /** The configured IPAM, when the plan takes its address from it. */
  ipam?: { add(): Promise<{ ip: string; prefixLength: number }>; release(): Promise<void> };
  /** Told of every step as it ends (the report is written as the run goes). */
  record(step: StepRecord): void;
}

export interface SelftestOutcome {
  steps: StepRecord[];
  address?: string;
  cleanupProblems: string[];
  passed: boolean;
}

export async function runSelftest(plan: SelftestPlan, deps: SelftestDeps): Promise<SelftestOutcome> {
  const bound: Bound = { ...plan.bound };
  const steps: StepRecord[] = [];
  let planned = plan.planned;
  await deps.claims.claim(planned);
  const usesIpam = deps.ipam !== undefined && bound.ip === undefined;
  if (usesIpam) {
    const got = await deps.ipam!.add();
    bound.ip = got.ip;
    bound.prefix = got.prefixLength;
  }
  let stopped: string | undefined;
  for (const step of plan.steps) {
    const rec = stopped ? skipped(step, stopped) : await runStep(step, deps.hns, bound);
    steps.push(rec);
    deps.record(rec);
    if (!stopped && !rec.pass && step.bind) stopped = step.name;
    const followed = followIds(planned, plan.bound, bound);
    if (followed !== planned) {
      planned = followed;
      await deps.claims.follow(planned);
    }
  }
  const cleanupProblems = await cleanup(plan, deps.hns, bound);
  if (cleanupProblems.length === 0) {
    if (usesIpam) await deps.ipam!.release();
    await deps.claims.drop();
  }
  return {
    steps,
    ...(bound.ip !== undefined ? { address: String(bound.ip) } : {}),
    cleanupProblems,
    passed: cleanupProblems.length === 0 && steps.every((s) => s.pass),
  };
}

async function runStep(step: Step, hns: SelftestHns, bound: Bound): Promise<StepRecord> {
  const call = { fn: step.call.fn, args: resolve(step.call.args, bound) as unknown[] };
  const answer = await answerOf(invoke(hns, call));
  for (const [token, path] of Object.entries(step.bind ?? {})) {
    const v = answer.ok ? at(answer.value, path) : undefined;
    if (typeof v === 'string' || typeof v === 'number') bound[token] = v;
  }
  const problem = problemWith(step.expect, answer, bound);
  return {
    name: step.name,
    why: step.why,
    call,
    answer,
    expect: step.expect,
    pass: problem === undefined,
    ...(problem ? { problem } : {}),
    ...(step.focus && bound[step.focus] !== undefined ? { focus: String(bound[step.focus]) } : {}),
  };
}

function skipped(step: Step, after: string): StepRecord {
  return {
    name: step.name,
    why: step.why,
    call: step.call,
    answer: { ok: true, value: null },
    expect: step.expect,
    pass: false,
    skipped: true,
    problem: `not run: ${after} failed`,
  };
}

/** The planned objects with the ids HNS really gave (the same array when nothing changed). */
function followIds(planned: PlannedObject[], asked: Bound, bound: Bound): PlannedObject[] {
  const moved = (id: string | undefined) =>
    Object.keys(asked).find((t) => asked[t] === id && bound[t] !== undefined && bound[t] !== id);
  if (!planned.some((p) => moved(p.id))) return planned;
  return planned.map((p) => {
    const t = moved(p.id);
    return t ? { ...p, id: String(bound[t]) } : p;
  });
}

const GONE = new Set<number>([...NOT_FOUND_HRESULTS, HR.ENDPOINT_NOT_ATTACHED]);

async function cleanup(plan: SelftestPlan, hns: SelftestHns, bound: Bound): Promise<string[]> {
  const problems: string[] = [];
  for (const c of plan.cleanup) {
    let args: unknown[];
    try {
      args = resolve(c.args, bound) as unknown[];
    } catch {
      continue; // an object the run never came to know of was never created
    }
    const answer = await answerOf(invoke(hns, { fn: c.fn, args }));
    if (!answer.ok && !GONE.has(answer.hresult))
      problems.push(`${c.fn}(${args.join(', ')}): ${answer.hex} ${answer.code}: ${answer.message}`);
  }
  return problems;
}

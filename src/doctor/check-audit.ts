/**
 * What the leak audit would do now (its dry run: the same judgement, src/orphans/detect.ts, over the snapshot):
 * objects of ours it would delete (orphans), and objects it must leave because a record it cannot read protects
 * them. Live, in-flight and foreign objects are as they should be.
 */
import { detect } from '../orphans/detect';
import { nextStep } from '../orphans/next-step';
import type { Finding } from './finding';
import type { DoctorSnapshot } from './snapshot';

export function checkAudit(s: DoctorSnapshot): Finding[] {
  if (!s.hns || !s.state) return [];
  const intentLive = new Map(Object.entries(s.state.intentLive));
  const plan = detect({ networks: s.hns.networks, endpoints: s.hns.endpoints, state: s.state.snapshot, intentLive });
  return plan.judged.flatMap((j): Finding[] => {
    const subject = `${j.kind} ${j.name} (${j.id})`;
    const detail = { id: j.id, verdict: j.verdict, reason: j.reason };
    if (j.verdict === 'orphan') {
      return [
        {
          kind: 'audit-orphan',
          severity: 'warning',
          subject,
          why: `ours and leaked: ${j.reason}; the next audit deletes it`,
          next: "hcn-cni audit --dry-run, then hcn-cni audit (or wait for the node agent's)",
          detail,
        },
      ];
    }
    if (j.verdict === 'protected') {
      return [
        {
          kind: 'audit-protected',
          severity: 'warning',
          subject,
          why: `the audit leaves it: ${j.reason}`,
          next: nextStep(j)!,
          detail,
        },
      ];
    }
    return [];
  });
}

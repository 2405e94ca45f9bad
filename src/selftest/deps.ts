/**
 * The self-test's dependencies made from the plugin's own parts: the claim is the intent a pod's ADD writes (the one
 * claim lifecycle, src/plugin/claim.ts), the address comes from the configured IPAM as a pod's does.
 */
import type { IpamClient } from '../cni/types';
import { updateIntent, writeIntent, type ClaimContext } from '../plugin/claim';
import { Undo } from '../plugin/undo';
import type { IntentRecord, PlannedObject } from '../state/records';
import type { SelftestDeps } from './run';

export function claimsOf(a: Omit<ClaimContext, 'undo'>): SelftestDeps['claims'] {
  const ctx: ClaimContext = { ...a, undo: new Undo() };
  let intent: IntentRecord | undefined;
  return {
    async claim(planned: PlannedObject[]) {
      intent = await writeIntent(ctx, planned);
    },
    async follow(planned: PlannedObject[]) {
      if (intent) intent = await updateIntent(ctx, intent, planned);
    },
    async drop() {
      if (!intent) return;
      await a.store.removeIntent(a.plan.owner, intent.id);
      a.store.attemptEnded(intent.id);
    },
  };
}

/** The first address IPAM gives (an endpoint takes one per family; the self-test needs one). */
export function ipamOf(ipam: IpamClient): NonNullable<SelftestDeps['ipam']> {
  return {
    async add() {
      const r = await ipam.add();
      const first = r.ips[0];
      if (!first) throw new Error(`ipam plugin "${ipam.type}" returned no address`);
      const [ip, prefix] = first.address.split('/');
      return { ip: ip!, prefixLength: Number(prefix) };
    },
    release: () => ipam.del(),
  };
}

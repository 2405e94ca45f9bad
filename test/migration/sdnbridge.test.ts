/**
 * Migrating from sdnbridge (microsoft/windows-container-networking plugins/sdnbridge, HCN v2 only, containerd
 * namespaces) with 5 pods running. Its example/l2bridge.conf (test/fixtures/peers/wcn.l2bridge.conf) with only
 * `type` changed (cniVersion raised to 1.0.0, which GC needs 1.1.0 of): no ipam type, so HNS assigns the addresses,
 * as it did for sdnbridge — there is no IPAM state to inherit, and rule 1 is HNS's own (no address on two endpoints).
 */
import { useHarness } from '../helpers/cni-harness';
import { bindNode, sdnbridgeScenario } from './peer-bodies';

useHarness(undefined, bindNode);

it('5 running pods: DEL 3 removes their sdnbridge endpoints (namespace detach, delete), ADD 5, GC; the rest untouched', async () => {
  await sdnbridgeScenario();
});

/**
 * Migrating from win-overlay (containernetworking/plugins plugins/main/windows/win-overlay) on a Docker-style node:
 * HNS v1 (its default, `apiVersion` absent), CNI_NETNS "none", each endpoint hot-attached to its sandbox container
 * over HCS. Its sample.conf with host-local IPAM (cmdHnsAdd always runs IPAM) and only `type` changed for hcn-cni —
 * no networkType: the existing Overlay network's type is used (rule 4).
 */
import { useHarness } from '../helpers/cni-harness';
import { bindNode, winOverlayScenario } from './peer-bodies';

useHarness(undefined, bindNode);

it('5 running Docker pods (HNS v1, hot-attached): DEL 3 hot-detaches and removes theirs, ADD 5, GC; the rest untouched', async () => {
  await winOverlayScenario();
});

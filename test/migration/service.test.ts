/**
 * The same switch-overs as the per-peer suites (test/migration/peer-bodies.ts), with every CNI call made as a runtime
 * makes it on a node running the service: the native shim as `hcn-cni` forwards it to `hcn-cni serve` (a separate
 * process, test/service/support.ts). The standalone executable never runs: the service answered everything.
 */
import { startSandboxContainer, useHarness, type Harness } from '../helpers/cni-harness';
import { makeBin, startServiceProcess, viaShim, type Bin, type RunningService } from '../service/support';
import {
  azureScenario,
  bindNode,
  delegatedScenario,
  NIC_HOST,
  sdnbridgeScenario,
  winBridgeScenario,
  winOverlayScenario,
} from './peer-bodies';
import type { Runner } from './support';

let h: Harness;
let bin: Bin;
let service: RunningService;
useHarness(NIC_HOST, (x) => bindNode((h = x)));
jest.setTimeout(120_000);

beforeEach(async () => {
  bin = makeBin(h);
  service = await startServiceProcess(h);
});
afterEach(async () => {
  await service.stop();
});

/** Through the shim; a Docker-style ADD's sandbox container is started first, as the runtime does. */
const shim: Runner = async (_h, c) => {
  await startSandboxContainer(h, c);
  return viaShim(h, bin, service.address, c);
};

it.each([
  ['win-bridge', winBridgeScenario],
  ['win-overlay (HNS v1, Docker)', winOverlayScenario],
  ['sdnbridge', sdnbridgeScenario],
  ['Azure CNI bridge (adopt)', azureScenario],
  ['Azure CNI delegated NIC (adopt)', delegatedScenario],
])('%s: 5 running pods, DEL 3, ADD 5, GC through the shim and the service', async (_peer, scenario) => {
  await scenario(shim);
  expect(bin.standaloneRuns()).toBe(0);
});

/**
 * The executable answers within hnsTimeoutSeconds and exits, even when HNS never answers: the CLI ends through the
 * addon's exitNow, never waiting for the hung HCN call's thread.
 */
import { cniProcess, startHarness, type Harness } from '../helpers/cni-harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.sim.control.release();
  await h.stop();
});

it('STATUS with a hung HNS answers 50 after the timeout and the process is gone long before HNS answers', async () => {
  await h.sim.control.hang('*', { ms: 8000 });
  const t0 = Date.now();
  const r = await cniProcess(h, {
    verb: 'STATUS',
    conf: { cniVersion: '1.1.0', name: 'x', type: 'hcn-cni', hnsTimeoutSeconds: 1 },
  });
  const elapsed = Date.now() - t0;
  expect(r.json).toMatchObject({ code: 50, msg: expect.stringMatching(/no answer from HNS within 1s/) });
  // A structural bound, not a benchmark: 1 s timeout plus process start-up, far below the 8 s hang.
  expect(elapsed).toBeLessThan(5000);
});

/**
 * A hung HNS never stalls unrelated pods. An HCN call past hnsTimeoutSeconds keeps running (it
 * cannot be cancelled) on a thread of the addon's own, so it holds nothing that later calls need: after 100 of
 * them a fresh pod's ADD through the service succeeds, and `hcn-cni service` lists them with their age. Before,
 * each held one of libuv's 32 pool threads in the service, and from the 33rd on every verb of every pod failed with
 * 11 although HNS answered at once. Past the bound on abandoned calls the service stops accepting, finishes what it
 * accepted and exits 75 for a restart (src/service/hand-over/abandoned-bound.ts); shims then run hcn-cni-standalone. The
 * standalone executable's answer to a hung call is unchanged.
 */
import { execFile } from 'child_process';
import * as path from 'path';
import { promisify } from 'util';
import { bridgeConf, CLI, cniProcess, useHarness, type Harness } from '../helpers/cni-harness';
import { newNamespace, until } from '../plugin/support';
import { makeBin, startServiceProcess, viaShim, type Bin } from './support';

let h: Harness;
let bin: Bin;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(240_000);
beforeEach(() => {
  bin = makeBin(h);
});
afterEach(async () => {
  await h.sim.control.release();
});

/**
 * A read every ADD makes (the lookup of its own endpoint name; the node agent's audits list through HNSCall): a hung
 * read holds nothing in the simulator, as a hung mutation would.
 */
const HUNG_OP = 'HcnEnumerateEndpoints';
const TIMEOUT_S = 2;
const conf = bridgeConf({ hnsTimeoutSeconds: TIMEOUT_S });
/** Calls of HUNG_OP HNS has seen since `baseline` was taken. */
let baseline = 0;
const seenByHns = async (): Promise<number> => ((await h.sim.control.stats()).calls[HUNG_OP] ?? 0) - baseline;

/** ADDs of distinct pods through the shim, `batch` at a time, until HNS holds `n` hung calls (or 12 batches). */
async function hangAdds(address: string, n: number, batch: number): Promise<Array<number | undefined>> {
  const codes: Array<number | undefined> = [];
  for (let round = 0; round < 12 && (await seenByHns()) < n; round++) {
    const k = Math.min(batch, n - (await seenByHns()));
    const outs = await Promise.all(
      Array.from({ length: k }, (_, i) =>
        viaShim(h, bin, address, { verb: 'ADD', conf, containerId: `stuck-${round}-${i}` }),
      ),
    );
    codes.push(...outs.map((o) => o.json?.code as number | undefined));
  }
  return codes;
}

const freshAdd = async (address: string, containerId: string) =>
  viaShim(h, bin, address, { verb: 'ADD', conf, containerId, netns: await newNamespace(h) });

describe('100 hung HNS calls of one kind in the service', () => {
  it('a fresh pod ADD through the service then succeeds; status shows the abandoned calls and their age', async () => {
    const HUNG = 100;
    const service = await startServiceProcess(h);
    try {
      // The node agent's first visit of the network (its audit, its doctor's look) is over before HNS hangs: the
      // calls counted are the ADDs'. Later looks wait while calls are abandoned (node-doctor.ts).
      await freshAdd(service.address, 'warm');
      await until(
        async () => (((await service.status()).agent?.audits ?? 0) >= 1 ? true : undefined),
        20_000,
        "the agent's first visit",
      );
      baseline += await seenByHns();
      await h.sim.control.hang(HUNG_OP, { count: HUNG });
      const codes = await hangAdds(service.address, HUNG, 25);
      const hungAtHns = await seenByHns();

      const fresh = await freshAdd(service.address, 'fresh');
      expect({ exit: fresh.exitCode, code: fresh.json?.code, msg: fresh.json?.msg }).toEqual({
        exit: 0,
        code: undefined,
        msg: undefined,
      });
      expect(fresh.json?.ips).toHaveLength(1);
      expect(bin.standaloneRuns()).toBe(0); // the service answered, not the fallback
      // Every one of the 100 reached HNS: none waited behind another for a thread.
      expect(hungAtHns).toBe(HUNG);
      expect(codes).toEqual(Array(HUNG).fill(11));

      const { abandoned } = await service.status();
      expect(abandoned.count).toBe(HUNG);
      expect(abandoned.byOp.map((o) => [o.op, o.count])).toEqual([[HUNG_OP, HUNG]]);
      // Abandoned once its timeout had passed: every one is older than that (half of it, to spare clock rounding).
      expect(abandoned.byOp[0]!.newestAgeMs).toBeGreaterThanOrEqual((TIMEOUT_S * 1000) / 2);
      expect(abandoned.byOp[0]!.oldestAgeMs).toBeGreaterThanOrEqual(abandoned.byOp[0]!.newestAgeMs);
      const text = (
        await promisify(execFile)(process.execPath, [CLI, 'service', '--service', service.address], {
          env: { PATH: process.env.PATH },
        })
      ).stdout;
      expect(text).toContain(`abandoned HCN calls: ${HUNG} (`);
      expect(text).toMatch(new RegExp(`^${HUNG_OP}\\s+${HUNG}\\s+\\d+\\.\\ds\\s+\\d+\\.\\ds$`, 'm'));

      // Once HNS answers them they are no longer abandoned.
      await h.sim.control.release();
      await until(
        async () => ((await service.status()).abandoned.count === 0 ? true : undefined),
        30_000,
        'the abandoned calls to end',
      );
      expect(service.child.exitCode).toBeNull();
    } finally {
      baseline = 0;
      await service.stop();
    }
  });
});

describe('past the bound on abandoned calls', () => {
  it('the service stops accepting, exits 75, and the shim runs the standalone executable', async () => {
    const service = await startServiceProcess(h, path.join(h.tmp, 'run', 'service.sock'), [
      '--max-abandoned-calls',
      '3',
    ]);
    await h.sim.control.hang(HUNG_OP, { count: 3 });
    // The requests it accepted are answered (their verbs finish) before it exits.
    expect(await hangAdds(service.address, 3, 3)).toEqual([11, 11, 11]);
    expect(await service.exited).toEqual({ code: 75, signal: null });
    expect(service.stderr()).toMatch(/3 HCN calls are past their timeout and still unanswered \(the bound is 3;/);
    expect(service.stderr()).toMatch(/no longer accepting/);

    const fresh = await freshAdd(service.address, 'after');
    expect({ exit: fresh.exitCode, code: fresh.json?.code }).toEqual({ exit: 0, code: undefined });
    expect(bin.standaloneRuns()).toBe(1);
  });

  it.each([['0'], ['many'], ['']])('--max-abandoned-calls %j is refused in one line (exit 2)', async (value) => {
    const r = await promisify(execFile)(process.execPath, [CLI, 'serve', '--max-abandoned-calls', value], {
      env: { PATH: process.env.PATH },
    }).catch((e: { code: number; stderr: string }) => e);
    expect('code' in r ? r.code : 0).toBe(2);
    expect(r.stderr).toBe(
      `hcn-cni serve: --max-abandoned-calls needs a whole number from 1 to 999999, got ${JSON.stringify(value)}\n`,
    );
  });
});

describe('standalone', () => {
  it('a hung call still gives the CNI error it gave (11, naming the call and the timeout), and the process ends', async () => {
    // The whole-node audit's listing, due on this ADD (auditIntervalSeconds 0).
    const listing = 'HNSCall GET /endpoints';
    await h.sim.control.hang(listing);
    const r = await cniProcess(h, {
      verb: 'ADD',
      conf: bridgeConf({ hnsTimeoutSeconds: 1, auditIntervalSeconds: 0 }),
      containerId: 'alone',
    });
    expect(r.exitCode).not.toBe(0);
    expect(r.json).toMatchObject({
      code: 11,
      msg: `HNS did not answer while auditing HNS for leaked objects: ${listing} failed: This operation returned because the timeout period expired. (0x800705B4 ERROR_TIMEOUT): no answer from HNS within 1s`,
    });
  });
});

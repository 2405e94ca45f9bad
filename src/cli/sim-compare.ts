/**
 * `hcn-sim compare REPORT [--address ADDR] [--json]`: replays a host's self-test report (hcn-cni selftest --report) on
 * the simulator — a fresh one started for it, shaped like the host where the report says how (its HNS version, the
 * adapter its network binds), or the one at ADDR — and prints every difference in shape or code. Exit 1 when there
 * is one: each is a simulator fix (or a host the plugin must learn about).
 */
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { Hcn } from '../hns/hcn';
import { invoke } from '../selftest/calls';
import { at } from '../selftest/expect';
import { parseReport, type SelftestReport } from '../selftest/report';
import { describeDifference, fixtureOf, replay, type Fixture } from '../selftest/replay';
import { startSimulator, type RunningSimulator, type SimHost } from '../sim';
import { defaultHost } from '../sim/host';
import { UsageError } from './usage-error';

export interface CompareIo {
  env: NodeJS.ProcessEnv;
  out(s: string): void;
}

/** The simulated host: the defaults, with the host's HNS version and the adapter its network binds. */
function hostFor(report: SelftestReport, fixture: Fixture): Partial<SimHost> {
  const adapters = defaultHost().adapters.filter((a) => !fixture.adapters.some((f) => f.Name === a.Name));
  const version = report.steps.find((s) => s.name === 'hns-version');
  const major = version?.answer.ok ? at(version.answer.value, 'Major') : undefined;
  const minor = version?.answer.ok ? at(version.answer.value, 'Minor') : undefined;
  return {
    adapters: [...adapters, ...fixture.adapters],
    ...(typeof major === 'number' && typeof minor === 'number' ? { version: { major, minor } } : {}),
    v2: report.host.capabilities.v2Supported,
  };
}

export async function compare(argv: string[], io: CompareIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { address: { type: 'string' }, json: { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1) throw new UsageError('compare needs one REPORT file');
  const file = positionals[0]!;
  const report = parseReport(fs.readFileSync(file, 'utf8'), file);
  const fixture = fixtureOf(report);
  let sim: RunningSimulator | undefined;
  if (!values.address) sim = await startSimulator({ logLevel: 'warn', host: hostFor(report, fixture) });
  // The simulator's client library (inside the addon) finds the simulator through HCN_SIM.
  io.env.HCN_SIM = values.address ?? sim!.address;
  try {
    const hcn = Hcn.open({});
    if (fixture.network) await hcn.createNetwork(fixture.network.settings, fixture.network.id);
    const outcome = await replay(report, hcn);
    if (fixture.network) await invoke(hcn, { fn: 'deleteNetwork', args: [fixture.network.id] });
    if (values.json) io.out(`${JSON.stringify(outcome, null, 2)}\n`);
    else {
      for (const d of outcome.differences) io.out(`${describeDifference(d)}\n`);
      io.out(
        `compare: ${outcome.compared} calls replayed${outcome.skipped ? ` (${outcome.skipped} not run on the host)` : ''}, ` +
          `${outcome.differences.length} difference(s)\n`,
      );
    }
    return outcome.differences.length > 0 ? 1 : 0;
  } finally {
    await sim?.stop();
  }
}

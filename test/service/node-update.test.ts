/**
 * A node's update as the DaemonSet does it (docs/install.md, "The DaemonSet's update"): the new image's
 * `hcn-cni install` replaces the shim and the standalone executable in containerd's bin directory while pods come and
 * go through them, then the new image's service takes the address over. The runtime execs the installed shim for
 * every verb, so each replacement must leave the path naming a whole executable at every moment (install writes a
 * temporary file and renames it over the target, src/install/file-install.ts): no verb may fail, fall back to the
 * standalone executable, or run a half-written file.
 */
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { promisify } from 'util';
import { CLI, useHarness, type Harness } from '../helpers/cni-harness';
import { logLines, until } from '../plugin/support';
import {
  adDelLanes,
  expectNothingLeft,
  runsIn,
  SHIM,
  startServiceProcess,
  writeStandalone,
  type Bin,
  type RunningService,
} from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(180_000);

const run = promisify(execFile);

/**
 * One image's executables: the real shim (its bytes with the image's tag appended, which an ELF ignores, so each
 * image's file differs and install replaces it) and a standalone wrapper that records its runs in one shared file.
 */
function image(tag: string, runs: string): { executable: string; shim: string } {
  const dir = path.join(h.tmp, `image-${tag}`);
  fs.mkdirSync(dir, { recursive: true });
  const executable = path.join(dir, 'hcn-cni-standalone');
  writeStandalone(executable, runs, `image ${tag}`);
  const shim = path.join(dir, 'hcn-cni-shim');
  fs.writeFileSync(shim, Buffer.concat([fs.readFileSync(SHIM), Buffer.from(`\nimage ${tag}\n`)]), { mode: 0o755 });
  return { executable, shim };
}

/** `hcn-cni install` of one image's executables into `binDir`, as the init container runs it: its own process. */
async function install(img: { executable: string; shim: string }, binDir: string): Promise<string> {
  const { stdout } = await run(process.execPath, [
    CLI,
    'install',
    '--bin-dir',
    binDir,
    '--conf-dir',
    path.join(h.tmp, 'net.d'),
    '--containerd-config',
    path.join(h.tmp, 'no-containerd-config.toml'),
    '--executable',
    img.executable,
    '--shim',
    img.shim,
  ]);
  return stdout;
}

it('install replaces the executables under running verbs and the new service takes over: every verb succeeds, none falls back', async () => {
  const runs = path.join(h.tmp, 'standalone.runs');
  const images = [image('old', runs), image('new', runs)];
  const binDir = path.join(h.tmp, 'opt-cni-bin');
  expect(await install(images[0]!, binDir)).toMatch(/shim .*hcn-cni: installed/);
  const bin: Bin = {
    dir: binDir,
    shim: path.join(binDir, 'hcn-cni'),
    standaloneRuns: () => runsIn(runs),
  };
  const installedImage = () => /image (\w+)\n$/.exec(fs.readFileSync(bin.shim).toString('latin1'))?.[1];

  const a = await startServiceProcess(h);
  let b: RunningService | undefined;
  let lanes: ReturnType<typeof adDelLanes> | undefined;
  try {
    lanes = adDelLanes(h, bin, a.address);
    const { outcomes } = lanes;
    await until(() => (outcomes.length >= 4 ? true : undefined), 60_000, 'verbs through the installed shim');

    // The update's install, and (an image rolled back and forward again) more of them, while the lanes exec the shim.
    let replaced = 0;
    for (let round = 1; round <= 8; round++) {
      const out = await install(images[round % 2]!, binDir);
      if (/shim .*: replaced/.test(out) && /standalone executable .*: replaced/.test(out)) replaced++;
    }
    expect(replaced).toBe(8);
    expect(installedImage()).toBe('old');
    await install(images[1]!, binDir);
    expect(installedImage()).toBe('new');
    const verbsDuringInstalls = outcomes.length;

    // The new image's service takes the address over while the lanes go on.
    b = await startServiceProcess(h, a.address);
    expect(await a.exited).toEqual({ code: 0, signal: null });
    const servedByB = () => outcomes.filter((o) => logLines(o.out.stderr)[0]?.pid === b!.child.pid).length;
    await until(() => (servedByB() >= 4 ? true : undefined), 60_000, 'the new service to serve some verbs');
    await lanes.stop();

    expect(verbsDuringInstalls).toBeGreaterThan(4);
    expect(
      outcomes.filter((o) => o.out.exitCode !== 0).map((o) => `${o.what}: ${o.out.stdout}${o.out.stderr}`),
    ).toEqual([]);
    expect(outcomes.filter((o) => /not using the service/.test(o.out.stderr)).map((o) => o.what)).toEqual([]);
    expect(bin.standaloneRuns()).toBe(0);
    // Nothing install wrote is left beside the executables: each temporary file was renamed into place.
    expect(fs.readdirSync(binDir).sort()).toEqual(['hcn-cni', 'hcn-cni-standalone']);
    await expectNothingLeft(h);
  } finally {
    await lanes?.stop();
    await b?.stop();
    await a.stop();
  }
});

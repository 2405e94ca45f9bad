/**
 * dist/hcn-cni, the Linux single-executable build (this node + the esbuild bundle + hcn.node and libhcnsim.so as
 * SEA assets), run as a runtime runs a plugin: a minimal environment, the configuration on stdin.
 *  - VERSION answers without loading the addon (nothing is extracted);
 *  - ADD / CHECK / DEL in bridge mode against the simulator; stdout carries only the result, logs go to stderr;
 *  - the addon is extracted once to <TMPDIR>/hcn-cni-<content hash>/; a second start writes nothing;
 *  - the crash-point test hooks are compiled out (__HCN_TEST_HOOKS__ = false);
 *  - `serve --metrics` works from the executable (prom-client is bundled, and evaluated only then);
 *  - `selftest` runs from the executable's whole program against the simulator and leaves nothing.
 */
import { spawn } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import { bridgeConf, CLI, cniEnv, removeTempDir, startHarness, type Harness } from '../helpers/cni-harness';
import { ensureLinuxPackage, EXE, extractDirName, MANIFEST, ROOT, run } from './helpers';

let h: Harness;
let tmp: string;

beforeAll(async () => {
  const built = ensureLinuxPackage();
  if (/building/.test(built.log))
    console.log(`packaged dist/hcn-cni in ${(built.ms / 1000).toFixed(1)} s\n${built.log}`);
  h = await startHarness();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-pkg-'));
}, 600_000);

afterAll(async () => {
  await h?.stop();
  if (tmp) removeTempDir(tmp);
});

beforeEach(async () => {
  await h.reset();
});

async function newNamespace(): Promise<string> {
  const id = crypto.randomUUID();
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNamespace({}, id);
  return id;
}

/** The executable with a fresh TMPDIR unless one is given (that is where it extracts the addon). */
function exe(
  verb: 'ADD' | 'CHECK' | 'DEL' | 'VERSION' | 'STATUS',
  conf: Record<string, unknown>,
  opts: { containerId?: string; netns?: string; tmpdir?: string; env?: Record<string, string> } = {},
) {
  const env = {
    ...cniEnv(h, {
      verb,
      conf,
      ...(opts.containerId ? { containerId: opts.containerId } : {}),
      ...(opts.netns ? { netns: opts.netns } : {}),
    }),
    TMPDIR: opts.tmpdir ?? fs.mkdtempSync(path.join(tmp, 't-')),
    ...opts.env,
  };
  return run(EXE, [], env, JSON.stringify({ stateDir: h.stateDir, logLevel: 'debug', ...conf }));
}

/** stdout is one JSON document and a newline: nothing else may ever be printed there. */
function onlyResult(stdout: string): Record<string, any> {
  expect(stdout.endsWith('\n')).toBe(true);
  expect(stdout.indexOf('\n')).toBe(stdout.length - 1);
  return JSON.parse(stdout) as Record<string, any>;
}

/** Every stderr line is a pino JSON line. */
function logLines(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function extracted(
  tmpdir: string,
): Array<{ rel: string; ino: number; mtimeMs: number; ctimeMs: number; size: number }> {
  const out: Array<{ rel: string; ino: number; mtimeMs: number; ctimeMs: number; size: number }> = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const st = fs.statSync(p);
      out.push({ rel: path.relative(tmpdir, p), ino: st.ino, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, size: st.size });
      if (e.isDirectory()) walk(p);
    }
  };
  walk(tmpdir);
  return out.sort((a, b) => a.rel.localeCompare(b.rel));
}

test('the package manifest describes what was built', () => {
  const m = JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as {
    targets: { linux: Record<string, any> };
    bundle: Record<string, any>;
  };
  expect(m.targets.linux).toMatchObject({
    file: 'dist/hcn-cni',
    node: process.versions.node,
    useCodeCache: true,
    lazyBuiltins: true,
  });
  expect(Object.keys(m.targets.linux.assets).sort()).toEqual([
    'hcn-assets.json',
    'hcn-cni-whole.js',
    'hcn-linux-x64.node',
    'libhcnsim-linux-x64.so',
  ]);
  expect(fs.statSync(EXE).size).toBe(m.targets.linux.bytes);
  expect(fs.statSync(EXE).mode & 0o111).not.toBe(0);
});

test("a CNI verb's main script holds no service, installer, doctor, self-test or TOML code; serve, install, uninstall, doctor and selftest run the whole program", async () => {
  // esbuild names each module it bundles in a comment line: what the executable's main script (the CNI bundle)
  // compiles at every start, against the whole program it runs for the three node-wide commands.
  const modules = (file: string) =>
    new Set(
      [...fs.readFileSync(path.join(ROOT, file), 'utf8').matchAll(/^\/\/ ((?:src|node_modules)\/\S+)$/gm)].map(
        (x) => x[1],
      ),
    );
  const main = modules('dist/hcn-cni.cni.bundle.js');
  const whole = modules('dist/hcn-cni.bundle.js');
  const left = [...whole].filter((f) => !main.has(f));
  for (const f of [
    'src/service/transport/intake.ts',
    'src/service/hand-over/hand-over.ts',
    'src/install/plan.ts',
    'src/cli/uninstall.ts',
    'src/cli/doctor.ts',
    'src/cli/doctor-bundle.ts',
    'src/doctor/gather.ts',
    'src/cli/selftest.ts',
    'src/selftest/plan.ts',
  ])
    expect(left).toContain(f);
  expect(left.filter((f) => f.startsWith('node_modules/fflate/'))).not.toEqual([]);
  expect(left.filter((f) => f.startsWith('node_modules/smol-toml/'))).not.toEqual([]);
  // What the verbs and the operator's tool use stays in the main script.
  for (const f of [
    'src/cni/dispatch.ts',
    'src/plugin/verbs/add.ts',
    'src/cli/operator.ts',
    'src/service/transport/client.ts',
  ])
    expect(main).toContain(f);
  expect(fs.statSync(path.join(ROOT, 'dist/hcn-cni.cni.bundle.js')).size).toBeLessThan(
    0.75 * fs.statSync(path.join(ROOT, 'dist/hcn-cni.bundle.js')).size,
  );
  // Each of the four answers from the whole program; a typo is still the operator's tool's refusal.
  for (const [cmd, usage] of [
    ['serve', /^usage: hcn-cni serve /],
    ['install', /^usage: hcn-cni install /],
    ['uninstall', /^usage: hcn-cni uninstall /],
    ['doctor', /^usage: hcn-cni doctor /],
    ['selftest', /^usage: hcn-cni selftest /],
  ] as const) {
    const r = await run(EXE, [cmd, '--help'], { TMPDIR: tmp });
    expect({ cmd, code: r.code, out: usage.test(r.stdout + r.stderr) }).toEqual({ cmd, code: 0, out: true });
  }
});

test('VERSION answers on stdout only, and neither loads nor extracts the addon', async () => {
  const tmpdir = fs.mkdtempSync(path.join(tmp, 'version-'));
  const r = await run(EXE, [], { CNI_COMMAND: 'VERSION', TMPDIR: tmpdir }, '{"cniVersion":"0.4.0"}');
  expect({ code: r.code, stdout: r.stdout }).toEqual({
    code: 0,
    stdout: '{"cniVersion":"0.4.0","supportedVersions":["0.1.0","0.2.0","0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]}\n',
  });
  expect(fs.readdirSync(tmpdir)).toEqual([]);
  // No stdin at all is fine too.
  const bare = await run(EXE, [], { CNI_COMMAND: 'VERSION', TMPDIR: tmpdir });
  expect(onlyResult(bare.stdout)).toEqual({
    cniVersion: '1.1.0',
    supportedVersions: ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'],
  });
});

test('bridge mode: ADD, CHECK, DEL through the executable; results on stdout, logs on stderr', async () => {
  const ns = await newNamespace();
  const add = await exe('ADD', bridgeConf(), { containerId: 'pkg-a', netns: ns });
  expect({ code: add.code, signal: add.signal }).toEqual({ code: 0, signal: null });
  const result = onlyResult(add.stdout);
  expect(result).toMatchObject({
    cniVersion: '1.0.0',
    interfaces: [{ name: 'eth0', mac: expect.stringMatching(/^00:15:5d(:[0-9a-f]{2}){3}$/), sandbox: ns }],
    ips: [{ address: expect.stringMatching(/^10\.244\.1\.\d+\/24$/), gateway: '10.244.1.1', interface: 0 }],
  });
  const lines = logLines(add.stderr);
  expect(lines.some((l) => l.msg === 'ADD ok' || (l.verb === 'ADD' && l.outcome === 'ok'))).toBe(true);
  expect(lines.find((l) => l.msg === 'HNS API chosen by the host')).toMatchObject({ api: 2 });
  const dump = await h.sim.control.dump();
  expect(dump.endpoints).toHaveLength(1);
  expect(String(dump.endpoints[0]!.HostComputeNamespace).toLowerCase()).toBe(ns);

  const check = await exe('CHECK', bridgeConf({ prevResult: result }), { containerId: 'pkg-a', netns: ns });
  expect({ code: check.code, stdout: check.stdout }).toEqual({ code: 0, stdout: '' });

  const del = await exe('DEL', bridgeConf(), { containerId: 'pkg-a', netns: ns });
  expect({ code: del.code, stdout: del.stdout }).toEqual({ code: 0, stdout: '' });
  expect((await h.sim.control.dump()).endpoints).toEqual([]);

  // A failure is error JSON on stdout, exit 1, still nothing else there.
  const bad = await exe('ADD', bridgeConf({ createNetwork: false, networkName: 'nope' }), {
    containerId: 'pkg-b',
    netns: ns,
  });
  expect(bad.code).toBe(1);
  expect(onlyResult(bad.stdout)).toMatchObject({ cniVersion: '1.0.0', code: 101 });
});

test('the addon is extracted once to a content-hashed directory; the second start writes nothing', async () => {
  const tmpdir = fs.mkdtempSync(path.join(tmp, 'extract-'));
  const dirName = extractDirName();
  const first = await exe('STATUS', { ...bridgeConf(), cniVersion: '1.1.0' }, { tmpdir });
  expect({ code: first.code, stdout: first.stdout }).toEqual({ code: 0, stdout: '' });
  const after1 = extracted(tmpdir);
  expect(after1.map((f) => f.rel)).toEqual([dirName, `${dirName}/hcn.node`, `${dirName}/libhcnsim.so`]);
  expect(fs.statSync(path.join(tmpdir, dirName)).mode & 0o777).toBe(0o700);
  expect(
    fs
      .readFileSync(path.join(tmpdir, `${dirName}/hcn.node`))
      .equals(fs.readFileSync(path.join(ROOT, 'build/Release/hcn.node'))),
  ).toBe(true);

  await new Promise((r) => setTimeout(r, 20)); // a rewrite would now show in mtime/ctime
  const ns = await newNamespace();
  const second = await exe('ADD', bridgeConf(), { tmpdir, containerId: 'pkg-x', netns: ns });
  expect(second.code).toBe(0);
  expect(extracted(tmpdir)).toEqual(after1);

  // A file of the right size but the wrong bytes is replaced, not trusted.
  const addonFile = path.join(tmpdir, `${dirName}/hcn.node`);
  const bytes = fs.readFileSync(addonFile);
  bytes[bytes.length - 1] ^= 0xff;
  fs.writeFileSync(addonFile, bytes);
  const third = await exe('DEL', bridgeConf(), { tmpdir, containerId: 'pkg-x', netns: ns });
  expect(third.code).toBe(0);
  expect(fs.readFileSync(addonFile).equals(fs.readFileSync(path.join(ROOT, 'build/Release/hcn.node')))).toBe(true);
  expect(fs.readdirSync(path.join(tmpdir, dirName)).sort()).toEqual(['hcn.node', 'libhcnsim.so']);
});

test('the crash-point test hooks are compiled out of the executable', async () => {
  const points = 'intent:tmp-written,intent:written,attachment:tmp-written,attachment:written';
  const ns = await newNamespace();
  const packaged = await exe('ADD', bridgeConf(), {
    containerId: 'pkg-hook',
    netns: ns,
    env: { HCN_CNI_TEST_CRASH_AT: points },
  });
  expect({ code: packaged.code, signal: packaged.signal }).toEqual({ code: 0, signal: null });
  // The same request through the unbundled test build does die at the first point: the hook names are real.
  if (fs.existsSync(CLI)) {
    const env = {
      ...cniEnv(h, { verb: 'ADD', conf: bridgeConf(), containerId: 'pkg-hook2', netns: ns }),
      HCN_CNI_TEST_CRASH_AT: points,
    };
    const unbundled = await run(
      process.execPath,
      [CLI],
      env,
      JSON.stringify({ stateDir: h.stateDir, ...bridgeConf() }),
    );
    expect(unbundled.signal).toBe('SIGKILL');
  }
});

test('selftest from the executable: every answer as the plugin relies on, nothing left in HNS', async () => {
  const hcn = h.deps.hns.hcn({ hnsTimeoutSeconds: 10 });
  await hcn.createNetwork({
    Name: 'st',
    Type: 'NAT',
    Ipams: [{ Type: 'Static', Subnets: [{ IpAddressPrefix: '10.99.0.0/24' }] }],
  });
  const stateDir = fs.mkdtempSync(path.join(tmp, 'state-'));
  const conf = path.join(tmp, 'selftest.conflist');
  fs.writeFileSync(
    conf,
    JSON.stringify({ cniVersion: '1.0.0', name: 'st', plugins: [{ type: 'hcn-cni', networkName: 'st', stateDir }] }),
  );
  const before = await h.sim.control.dump();
  const r = await run(EXE, ['selftest', '--conf', conf], {
    HCN_SIM: h.sim.address,
    TMPDIR: fs.mkdtempSync(path.join(tmp, 't-')),
    HCN_CNI_CLAIMS_DIR: path.join(tmp, 'claims'),
  });
  expect({ code: r.code, stderr: r.stderr, failed: r.stdout.split('\n').filter((l) => /^FAIL/.test(l)) }).toEqual({
    code: 0,
    stderr: '',
    failed: [],
  });
  expect(r.stdout).toMatch(/every answer as the plugin relies on; nothing left behind/);
  const after = await h.sim.control.dump();
  expect({ endpoints: after.endpoints, namespaces: after.namespaces, networks: after.networks.length }).toEqual({
    endpoints: before.endpoints,
    namespaces: before.namespaces,
    networks: before.networks.length,
  });
});

test('the service in the executable serves metrics with its bundled prom-client (--metrics)', async () => {
  const child = spawn(EXE, ['serve', '--listen', path.join(tmp, 'metrics.sock'), '--metrics', '127.0.0.1:0'], {
    env: { PATH: process.env.PATH, HCN_SIM: h.sim.address, TMPDIR: tmp } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', (d: Buffer) => {
        stderr += d.toString();
        const m = /"metrics":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/.exec(stderr);
        if (m) resolve(m[1]!);
      });
      child.on('exit', () => reject(new Error(`hcn-cni serve exited: ${stderr}`)));
    });
    const body = await new Promise<string>((resolve, reject) =>
      http
        .get(url, (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve(text));
        })
        .on('error', reject),
    );
    expect(body).toContain('# TYPE hcn_cni_verbs_total counter');
    expect(body).toContain('# TYPE hcn_cni_hns_call_duration_seconds histogram');
    expect(body).toMatch(/^hcn_cni_requests\{state="queued"\} 0$/m);
  } finally {
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }
});

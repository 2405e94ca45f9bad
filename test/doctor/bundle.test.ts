/**
 * `hcn-cni doctor --bundle FILE` against the simulator: the zip's contents, no secret of a conflist in it (a
 * service-account token under a key named like one, the same token under an innocent key, a kubeconfig path, a file
 * that is not JSON), a log's tail cut to the per-file bound, the total bound, and an existing file never overwritten.
 */
import * as fs from 'fs';
import * as path from 'path';
import { strFromU8, unzipSync } from 'fflate';
import { runDoctor } from '../../src/cli/doctor';
import { BUNDLE_LIMITS, Contents } from '../../src/cli/doctor-bundle';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { hostLocal, newNamespace } from '../plugin/support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

/** A service-account token's shape (a JWT): header.payload.signature, base64url. */
const TOKEN =
  'eyJhbGciOiJSUzI1NiIsImtpZCI6InBsYW50ZWQifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6a3ViZS1zeXN0ZW06aGNuIn0.c2VjcmV0LXNpZ25hdHVyZS1wbGFudGVk';
const PASSWORD = 'hunter2-planted-password';

function setUpNode(logFile: string): string {
  const confDir = path.join(h.tmp, 'conf');
  fs.mkdirSync(confDir, { recursive: true });
  const plugin: Record<string, unknown> = {
    ...bridgeConf({ ipam: hostLocal(h), stateDir: h.stateDir, hnsTimeoutSeconds: 10, logFile }),
    kubeconfig: '/etc/kubernetes/kubelet.conf',
    token: TOKEN,
    auth: { password: PASSWORD },
    annotations: { note: `Bearer ${TOKEN}` },
  };
  const { cniVersion, name, ...rest } = plugin;
  const file = path.join(confDir, '10-hcn.conflist');
  fs.writeFileSync(file, JSON.stringify({ cniVersion, name, plugins: [rest] }));
  fs.writeFileSync(path.join(confDir, '99-broken.conf'), `{ "token": "${TOKEN}", not json`);
  // As Windows PowerShell 5.1's Set-Content -Encoding UTF8 writes it: with a byte-order mark, still JSON to CNI.
  const other = { cniVersion: '1.0.0', name: 'peer', plugins: [{ type: 'win-overlay', token: TOKEN }] };
  fs.writeFileSync(path.join(confDir, '20-peer.conflist'), `\uFEFF${JSON.stringify(other)}`);
  return file;
}

async function doctor(args: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const code = await runDoctor(['--service', path.join(h.tmp, 'no-service.sock'), ...args], {
    env: { HCN_SIM: h.sim.address },
    load: {},
    out: () => undefined,
    err: (s) => (stderr += s),
  });
  return { code, stderr };
}

it('holds the report, every HNS object, the state, the service, the log tail, redacted conflists and versions; no secret', async () => {
  const log = path.join(h.tmp, 'hcn.log');
  const conf = setUpNode(log);
  const netns = await newNamespace(h);
  const add = bridgeConf({ ipam: hostLocal(h), stateDir: h.stateDir, logFile: log });
  expect((await cni(h, { verb: 'ADD', conf: add, containerId: 'pod-a', netns })).exitCode).toBe(0);
  fs.appendFileSync(log, `${JSON.stringify({ msg: 'a line', authToken: TOKEN })}\nplain line ${TOKEN}\nlast line\n`);
  const zip = path.join(h.tmp, 'bundle.zip');
  const r = await doctor(['--conf', conf, '--bundle', zip]);
  expect(r.stderr).toMatch(/wrote .*bundle\.zip/);
  const files = unzipSync(fs.readFileSync(zip));
  const names = Object.keys(files).sort();
  for (const n of [
    'MANIFEST.txt',
    'conf/10-hcn.conflist',
    'conf/20-peer.conflist',
    'hns/adapters.json',
    'hns/v1-endpoints.json',
    'hns/v1-namespaces.json',
    'hns/v1-networks.json',
    'hns/v2-endpoints.json',
    'hns/v2-namespaces.json',
    'hns/v2-networks.json',
    'logs/hcn.log.tail',
    'report.json',
    'report.txt',
    'service/status.json',
    'state/listing.json',
    'versions.json',
  ])
    expect(names).toContain(n);
  expect(names.filter((n) => n.startsWith('state/files/attachments/'))).toHaveLength(1);
  expect(names).not.toContain('conf/99-broken.conf');
  expect(strFromU8(files['MANIFEST.txt']!)).toMatch(/conf\/99-broken\.conf: not JSON/);
  const everything = names.map((n) => strFromU8(files[n]!)).join('\n');
  expect(everything).not.toContain(TOKEN);
  expect(everything).not.toContain(TOKEN.split('.')[2]);
  expect(everything).not.toContain(PASSWORD);
  expect(everything).not.toContain('/etc/kubernetes/kubelet.conf');
  // The endpoint of the pod is there as HNS gives it, and the log's last line.
  expect(strFromU8(files['hns/v2-endpoints.json']!)).toMatch(/"IpConfigurations"/);
  expect(strFromU8(files['logs/hcn.log.tail']!)).toMatch(/last line\n*$/);
  // The service asked is the one given with --service, not the default address.
  expect(JSON.parse(strFromU8(files['service/status.json']!))).toMatchObject({
    running: false,
    address: path.join(h.tmp, 'no-service.sock'),
  });
});

it('refuses to overwrite an existing file (exit 3), which stays as it was', async () => {
  const conf = setUpNode(path.join(h.tmp, 'none.log'));
  const zip = path.join(h.tmp, 'exists.zip');
  fs.writeFileSync(zip, 'precious');
  const r = await doctor(['--conf', conf, '--bundle', zip]);
  expect(r.code).toBe(3);
  expect(r.stderr).toMatch(/exists; refusing to overwrite/);
  expect(fs.readFileSync(zip, 'utf8')).toBe('precious');
});

it("cuts a large log's tail to the per-file bound, keeping its last lines", async () => {
  const log = path.join(h.tmp, 'big.log');
  const line = `${'x'.repeat(1000)}\n`;
  fs.writeFileSync(log, line.repeat(Math.ceil((BUNDLE_LIMITS.file * 1.5) / line.length)) + 'the end\n');
  const zip = path.join(h.tmp, 'big.zip');
  await doctor(['--conf', setUpNode(log), '--bundle', zip]);
  const tail = unzipSync(fs.readFileSync(zip))['logs/big.log.tail']!;
  expect(tail.length).toBeLessThanOrEqual(BUNDLE_LIMITS.file);
  expect(strFromU8(tail)).toMatch(/the end\n*$/);
});

it('keeps every file, and all together, within their bounds, naming what it left out', () => {
  const c = new Contents({ ...BUNDLE_LIMITS, file: 100, total: 250 });
  c.add('a', 'a'.repeat(100));
  c.add('too-big', 'b'.repeat(101));
  c.add('b', 'b'.repeat(100));
  c.add('over-total', 'c'.repeat(60));
  expect(Object.keys(c.files)).toEqual(['a', 'b']);
  expect(c.leftOut).toEqual([
    'too-big: 101 bytes, over the 100-byte limit of one file',
    "over-total: the bundle's 250-byte limit is reached",
  ]);
});

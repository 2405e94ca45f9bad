/**
 * Real HNS on a real Windows host (the windows-2022 job in .github/workflows/windows.yml). Opt-in: runs only with
 * HCN_INTEGRATION=1 on win32, skipped everywhere else. It changes the host's HNS state, and removes what it made.
 *
 * Needs: npm ci (node-gyp + MSVC build/Release/hcn.node) and npm run build:ts (dist/cli/hcn-cni.js, the plugin as
 * a runtime would run it unpackaged). HCN_INTEGRATION_PLUGIN may name a packaged hcn-cni.exe to test instead.
 *
 * A NAT network made by the plugin (createNetwork), an HCN namespace made here, then ADD / CHECK / DEL of one pod,
 * each checked with the same HCN calls Get-HnsEndpoint / Get-HnsNamespace make. With HCN_INTEGRATION_DOCKER=1 (the
 * runner has Docker with Windows containers) also the Docker path: a container started with --network none gets
 * its vNIC through HCS hot attach, and DEL after the container is gone exits 0.
 *
 * Cleanup works whatever fails first: every object is looked up again by name in afterAll, each removal on its own.
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { canonicalType } from '../../../src/hns/api';
import { Hcn } from '../../../src/hns/hcn';
import { endpointName } from '../../../src/orphans/ownership';

const enabled = process.env.HCN_INTEGRATION === '1' && process.platform === 'win32';
const docker = enabled && process.env.HCN_INTEGRATION_DOCKER === '1';
const IMAGE = process.env.HCN_INTEGRATION_IMAGE ?? 'mcr.microsoft.com/windows/nanoserver:ltsc2022';
const ROOT = path.resolve(__dirname, '../../..');
const PLUGIN = process.env.HCN_INTEGRATION_PLUGIN ?? path.join(ROOT, 'dist', 'cli', 'hcn-cni.js');
const NETWORK = 'hcn-cni-integration';
const SUBNET = '172.30.77.0/24';
const POD = 'hcn-cni-it-pod';

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function plugin(verb: string, conf: Record<string, unknown>, netns: string, containerId = POD): Promise<Outcome> {
  const [file, args] = PLUGIN.endsWith('.js') ? [process.execPath, [PLUGIN]] : [PLUGIN, []];
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      env: {
        ...process.env,
        CNI_COMMAND: verb,
        CNI_CONTAINERID: containerId,
        CNI_IFNAME: 'eth0',
        CNI_NETNS: netns,
        CNI_PATH: 'C:\\opt\\cni\\bin',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(JSON.stringify(conf));
  });
}

if (!enabled) {
  describe('real HNS integration', () => {
    test.skip('needs Windows and HCN_INTEGRATION=1', () => undefined);
  });
} else {
  describe('real HNS integration', () => {
    let hcn: Hcn;
    let stateDir: string;
    let namespaceId: string;
    const conf = () => ({
      cniVersion: '1.0.0',
      name: NETWORK,
      type: 'hcn-cni',
      networkType: 'NAT',
      createNetwork: true,
      subnet: SUBNET,
      apiVersion: 2,
      stateDir,
      logLevel: 'debug',
    });

    /** Each removal on its own: one that fails (or an object already gone) does not keep the others. */
    async function removeOurs(containers: string[] = []): Promise<void> {
      const names = new Set([POD, ...containers].map((c) => endpointName({ containerId: c, ifname: 'eth0' })));
      for (const ep of await hcn.listEndpoints().catch(() => [])) {
        if (names.has(String(ep.Name ?? ''))) await hcn.deleteEndpoint(String(ep.ID)).catch(() => undefined);
      }
      const net = await hcn.findNetworkByName(NETWORK).catch(() => undefined);
      if (net?.ID) await hcn.deleteNetwork(net.ID).catch(() => undefined);
    }

    const started: string[] = [];

    beforeAll(async () => {
      hcn = Hcn.open({ timeoutMs: 60_000 });
      expect(hcn.capabilities).toMatchObject({ v2Supported: true, v1Supported: true, hcsSupported: true, missing: [] });
      stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-cni-it-'));
      await removeOurs(); // a previous run that died halfway
      namespaceId = String((await hcn.createNamespace({})).ID).toLowerCase();
    }, 120_000);

    afterAll(async () => {
      for (const id of started) spawnSync('docker', ['rm', '-f', id], { encoding: 'utf8' });
      if (hcn) {
        await removeOurs(started).catch(() => undefined);
        if (namespaceId) await hcn.deleteNamespace(namespaceId).catch(() => undefined);
      }
      if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
    }, 120_000);

    test('ADD creates the NAT network and an endpoint in the HCN namespace; CHECK passes; DEL removes it', async () => {
      const add = await plugin('ADD', conf(), namespaceId);
      expect({ code: add.code, stderr: add.code === 0 ? '' : add.stderr }).toEqual({ code: 0, stderr: '' });
      const result = JSON.parse(add.stdout) as {
        ips: Array<{ address: string }>;
        interfaces: Array<{ sandbox?: string }>;
      };
      const ip = result.ips[0]!.address.split('/')[0]!;
      expect(ip).toMatch(/^172\.30\.77\.\d+$/);
      expect(result.interfaces[0]!.sandbox).toBe(namespaceId);

      // Get-HnsNetwork / Get-HnsEndpoint / Get-HnsNamespace, as HCN queries.
      const net = await hcn.findNetworkByName(NETWORK);
      // HNS leaves Type out of NAT networks (NAT is the zero value: hcsshim hcnnetwork.go); canonicalType reads that.
      expect(canonicalType(net?.Type)).toBe('NAT');
      const eps = (await hcn.listEndpoints()).filter(
        (e) => e.Name === endpointName({ containerId: POD, ifname: 'eth0' }),
      );
      expect(eps).toHaveLength(1);
      const ep = eps[0]!;
      expect(String(ep.HostComputeNetwork).toLowerCase()).toBe(String(net!.ID).toLowerCase());
      expect(String(ep.HostComputeNamespace).toLowerCase()).toBe(namespaceId);
      expect((ep.IpConfigurations ?? []).map((c) => c.IpAddress)).toEqual([ip]);
      const ns = await hcn.getNamespace(namespaceId);
      expect((ns.Resources ?? []).map((r) => String(r.Data.Id).toLowerCase())).toContain(String(ep.ID).toLowerCase());

      const check = await plugin('CHECK', { ...conf(), prevResult: result }, namespaceId);
      expect({ code: check.code, stdout: check.stdout }).toEqual({ code: 0, stdout: '' });

      const del = await plugin('DEL', conf(), namespaceId);
      expect({ code: del.code, stdout: del.stdout }).toEqual({ code: 0, stdout: '' });
      expect((await hcn.listEndpoints()).filter((e) => e.ID === ep.ID)).toEqual([]);
      expect((await hcn.getNamespace(namespaceId)).Resources ?? []).toEqual([]);
    }, 300_000);

    (docker ? test : test.skip)(
      'Docker (--network none): ADD hot-attaches through HCS, the container sees the address; DEL after the container is gone exits 0',
      async () => {
        const run = spawnSync('docker', ['run', '-d', '--network', 'none', IMAGE, 'ping', '-t', 'localhost'], {
          encoding: 'utf8',
          timeout: 600_000,
        });
        expect({ status: run.status, stderr: run.status === 0 ? '' : run.stderr }).toEqual({ status: 0, stderr: '' });
        const id = run.stdout.trim();
        started.push(id);
        const add = await plugin('ADD', conf(), 'none', id);
        expect({ code: add.code, stderr: add.code === 0 ? '' : add.stderr }).toEqual({ code: 0, stderr: '' });
        const ip = (JSON.parse(add.stdout) as { ips: Array<{ address: string }> }).ips[0]!.address.split('/')[0]!;
        // HNS shows the container on the endpoint (hcsshim IsAttached reads SharedContainers) ...
        const ep = (await hcn.listEndpoints()).find(
          (e) => e.Name === endpointName({ containerId: id, ifname: 'eth0' }),
        )!;
        const v1 = await hcn.hnsCall<{ SharedContainers?: string[] }>('GET', `/endpoints/${String(ep.ID)}`);
        expect((v1.SharedContainers ?? []).map((c) => c.toLowerCase())).toContain(id.toLowerCase());
        // ... and the container has the vNIC with the pod's address.
        const ipconfig = spawnSync('docker', ['exec', id, 'ipconfig'], { encoding: 'utf8', timeout: 120_000 });
        expect(ipconfig.stdout).toContain(ip);

        spawnSync('docker', ['rm', '-f', id], { encoding: 'utf8', timeout: 120_000 });
        const del = await plugin('DEL', conf(), 'none', id);
        expect({ code: del.code, stdout: del.stdout }).toEqual({ code: 0, stdout: '' });
        expect((await hcn.listEndpoints()).filter((e) => e.ID === ep.ID)).toEqual([]);
      },
      900_000,
    );
  });
}

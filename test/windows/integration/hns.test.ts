/**
 * Real HNS on a real Windows host (the windows-2022 job in .github/workflows/windows.yml). Opt-in: runs only with
 * HCN_INTEGRATION=1 on win32, skipped everywhere else. It changes the host's HNS state, and removes what it made.
 *
 * Needs: npm ci (node-gyp + MSVC build/Release/hcn.node) and npm run build:ts (dist/cli/hcn-cni.js, the plugin as
 * a runtime would run it unpackaged). HCN_INTEGRATION_PLUGIN may name a packaged hcn-cni.exe to test instead.
 *
 * A NAT network made by the plugin (createNetwork), an HCN namespace made here, then ADD / CHECK / DEL of one pod,
 * each checked with the same HCN calls Get-HnsEndpoint / Get-HnsNamespace make.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Hcn } from '../../../src/hns/hcn';

const enabled = process.env.HCN_INTEGRATION === '1' && process.platform === 'win32';
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

function plugin(verb: string, conf: Record<string, unknown>, netns: string): Promise<Outcome> {
  const [file, args] = PLUGIN.endsWith('.js') ? [process.execPath, [PLUGIN]] : [PLUGIN, []];
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      env: { ...process.env, CNI_COMMAND: verb, CNI_CONTAINERID: POD, CNI_IFNAME: 'eth0', CNI_NETNS: netns, CNI_PATH: 'C:\\opt\\cni\\bin' },
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

    async function removeOurs(): Promise<void> {
      for (const ep of await hcn.listEndpoints()) if (String(ep.Name ?? '').startsWith(`hcn-cni_ep_${POD}_`)) await hcn.deleteEndpoint(String(ep.ID)).catch(() => undefined);
      const net = await hcn.findNetworkByName(NETWORK);
      if (net?.ID) await hcn.deleteNetwork(net.ID).catch(() => undefined);
    }

    beforeAll(async () => {
      hcn = Hcn.open({ timeoutMs: 60_000 });
      expect(hcn.capabilities).toMatchObject({ v2Supported: true, missing: [] });
      stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-cni-it-'));
      await removeOurs(); // a previous run that died halfway
      namespaceId = String((await hcn.createNamespace({})).ID).toLowerCase();
    }, 120_000);

    afterAll(async () => {
      if (!hcn) return;
      await removeOurs();
      if (namespaceId) await hcn.deleteNamespace(namespaceId).catch(() => undefined);
      fs.rmSync(stateDir, { recursive: true, force: true });
    }, 120_000);

    test('ADD creates the NAT network and an endpoint in the HCN namespace; CHECK passes; DEL removes it', async () => {
      const add = await plugin('ADD', conf(), namespaceId);
      expect({ code: add.code, stderr: add.code === 0 ? '' : add.stderr }).toEqual({ code: 0, stderr: '' });
      const result = JSON.parse(add.stdout) as { ips: Array<{ address: string }>; interfaces: Array<{ sandbox?: string }> };
      const ip = result.ips[0]!.address.split('/')[0]!;
      expect(ip).toMatch(/^172\.30\.77\.\d+$/);
      expect(result.interfaces[0]!.sandbox).toBe(namespaceId);

      // Get-HnsNetwork / Get-HnsEndpoint / Get-HnsNamespace, as HCN queries.
      const net = await hcn.findNetworkByName(NETWORK);
      expect(net).toMatchObject({ Type: 'NAT' });
      const eps = (await hcn.listEndpoints()).filter((e) => String(e.Name ?? '').startsWith(`hcn-cni_ep_${POD}_eth0_`));
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
  });
}

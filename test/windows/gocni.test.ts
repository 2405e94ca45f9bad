/**
 * containerd's CNI library on Windows: the go-cni driver (test/gocni/driver) built with GOOS=windows runs
 * under wine and execs hcn-cni.exe — the single executable, and the shim answered by `hcn-cni-standalone.exe serve` —
 * on every deploy/ conflist: Setup (portMappings, dns, CRI's labels), Check, Remove, for a GUID netns and `none`,
 * against hcn-sim through the stand-in DLLs. Results, HNS objects and "nothing left" are asserted.
 *
 * Needs wine and the Windows build (describeWine) and go with go-cni (describeGo): with CI=true either missing fails.
 * dual-stack.conflist delegates to host-local, which exists here only as a Linux binary (Debian's
 * containernetworking-plugins): under wine it runs without its `ipam` block, HNS assigning the addresses from the same
 * subnets (the Linux suite, test/gocni, runs it with host-local).
 */
import { spawn, type ChildProcess } from 'child_process';
import { randomUUID, randomBytes } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startSimulator, type RunningSimulator } from '../../src/sim';
import {
  DEPLOY_CONFLISTS,
  DNS,
  PORTMAP,
  buildDriver,
  describeGo,
  driverLines,
  extraArgs,
  forNode,
  netnsKinds,
  readConflist,
} from '../gocni/gocni';
import { WineCni } from './helpers/cni-wine';
import {
  WINE,
  describeWine,
  installSystem32,
  runWine,
  warmWineserver,
  winPath,
  winePrefix,
  WineTimings,
} from './helpers/wine';

describeGo('go-cni under wine', () => {
  describeWine('go-cni (GOOS=windows) drives hcn-cni.exe and the shim on every deploy/ conflist', (build) => {
    let sim: RunningSimulator;
    let work: string;
    let driver: string;
    let cni: WineCni;
    let service: ChildProcess | undefined;
    let serviceErr = '';
    const pipe = `\\\\.\\pipe\\hcn-cni-gocni-${randomBytes(4).toString('hex')}`;
    const timings = new WineTimings();
    const bins: Record<'standalone' | 'service', string> = { standalone: '', service: '' };

    beforeAll(async () => {
      const t0 = Date.now();
      driver = buildDriver('windows');
      timings.add('go build driver.exe (GOOS=windows)', Date.now() - t0);
      work = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-wine-gocni-'));
      const prefix = winePrefix('main');
      installSystem32(prefix, ['computenetwork.dll', 'vmcompute.dll']);
      warmWineserver(prefix, 120);
      sim = await startSimulator({ listen: 'tcp:127.0.0.1:0', logLevel: 'warn' });
      cni = new WineCni(prefix, build.exe, sim, path.join(work, 'state'), timings);
      // Standalone: the single executable as hcn-cni.exe. Service: the shim as hcn-cni.exe, the single executable
      // beside it as hcn-cni-standalone.exe, which also serves the pipe.
      bins.standalone = path.join(work, 'bin-standalone');
      fs.mkdirSync(bins.standalone);
      fs.symlinkSync(build.exe, path.join(bins.standalone, 'hcn-cni.exe'));
      bins.service = path.join(work, 'bin-service');
      fs.mkdirSync(bins.service);
      fs.copyFileSync(path.join(build.winDir, 'hcn-cni-shim.exe'), path.join(bins.service, 'hcn-cni.exe'));
      fs.symlinkSync(build.exe, path.join(bins.service, 'hcn-cni-standalone.exe'));
      service = spawn(WINE, [path.join(bins.service, 'hcn-cni-standalone.exe'), 'serve', '--listen', pipe], {
        env: { ...prefix.env, HCN_SIM: sim.address },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      service.stderr!.on('data', (d: Buffer) => (serviceErr += d.toString()));
      const s0 = Date.now();
      while (!serviceErr.includes('service: listening')) {
        if (service.exitCode !== null || Date.now() - s0 > 120_000)
          throw new Error(`hcn-cni serve did not start under wine: ${serviceErr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      timings.add('hcn-cni-standalone.exe serve: listening', Date.now() - s0);
    }, 600_000);

    afterAll(async () => {
      if (service && service.exitCode === null && service.signalCode === null) service.kill('SIGKILL');
      service?.stderr?.destroy();
      await sim?.stop();
      if (work) fs.rmSync(work, { recursive: true, force: true });
      console.log(timings.format('wine timings (go-cni driver)'));
    });

    const cases = DEPLOY_CONFLISTS.flatMap((file) =>
      (['standalone', 'service'] as const).flatMap((mode) =>
        netnsKinds(file).map((netns) => [file, mode, netns] as const),
      ),
    );

    test.each(cases)(
      '%s, %s, netns %s: Setup, Check, Remove under wine',
      async (file, mode, kind) => {
        await sim.control.reset();
        const dir = fs.mkdtempSync(path.join(work, 'node-'));
        const confDir = path.join(dir, 'net.d');
        fs.mkdirSync(confDir);
        const conf = forNode(readConflist(file), { state: winPath(path.join(dir, 'state')), ipam: '' });
        for (const p of conf.plugins) delete p.ipam; // see the header: no Windows host-local here
        fs.writeFileSync(path.join(confDir, file), JSON.stringify(conf));
        if (/overlay/.test(file)) {
          await cni.hcn().createNetwork({
            SchemaVersion: { Major: 2, Minor: 0 },
            Name: 'vxlan0',
            Type: 'Overlay',
            Ipams: [
              {
                Type: 'Static',
                Subnets: [
                  {
                    IpAddressPrefix: '10.244.3.0/24',
                    Routes: [{ NextHop: '10.244.3.1', DestinationPrefix: '0.0.0.0/0' }],
                  },
                ],
              },
            ],
          });
        }
        const id = `pod-${randomUUID().slice(0, 8)}`;
        let netns = 'none';
        if (kind === 'guid') netns = await cni.newNamespace();
        else await sim.control.addContainer(id);
        const env = {
          HCN_SIM: sim.address,
          ...(mode === 'service' ? { HCN_CNI_SERVICE: pipe } : {}),
        };
        const drive = async (verb: string) => {
          const r = await runWine(
            cni.prefix,
            [
              driver,
              '-confdir',
              winPath(confDir),
              '-bindir',
              winPath(bins[mode]),
              '-id',
              id,
              '-netns',
              netns,
              '-verb',
              verb,
              '-portmap',
              JSON.stringify(PORTMAP),
              '-dns',
              JSON.stringify(DNS),
              ...extraArgs(file),
            ],
            { env, timeoutMs: 120_000 },
          );
          timings.add(`driver.exe ${verb} (${file}, ${mode}, ${kind})`, r.ms);
          return r;
        };

        const setup = await drive('setup');
        expect({ code: setup.code, errors: driverLines(setup.stderr) }).toEqual({ code: 0, errors: [] });
        // Who answered: the plugin's log lines reach the driver's stderr; the service marks its own.
        const logged = setup.stderr
          .split(/\r?\n/)
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { service?: boolean });
        expect(logged.length).toBeGreaterThan(0);
        expect(logged.every((l) => (l.service === true) === (mode === 'service'))).toBe(true);
        const result = JSON.parse(setup.stdout) as {
          raw: Array<{ interfaces: Array<{ sandbox?: string }>; ips: Array<{ address: string }> }>;
        };
        expect(result.raw).toHaveLength(1);
        const families = new Set(result.raw[0]!.ips.map((i) => (i.address.includes(':') ? 6 : 4)));
        expect(families).toEqual(new Set(/dual-stack/.test(file) ? [4, 6] : [4]));
        if (kind === 'guid')
          expect(result.raw[0]!.interfaces.some((i) => i.sandbox?.toLowerCase() === netns)).toBe(true);

        const after = await sim.control.dump();
        expect(after.endpoints).toHaveLength(1);
        const ep = after.endpoints[0]! as Record<string, any>;
        expect(ep.Policies).toEqual(
          expect.arrayContaining([
            expect.objectContaining({
              Type: 'PortMapping',
              Settings: expect.objectContaining({ InternalPort: 80, ExternalPort: 8080, Protocol: 6 }),
            }),
          ]),
        );
        expect(ep.Dns?.ServerList).toEqual(['10.96.0.10']);
        if (kind === 'guid') {
          const ns = after.namespaces.find((n) => n.ID.toLowerCase() === netns)! as Record<string, any>;
          expect(ns.Resources).toEqual([{ Type: 'Endpoint', Data: { Id: String(ep.ID).toUpperCase() } }]);
        } else {
          const cs = after.computeSystems.find((c) => c.ID === id)!;
          expect(cs.Endpoints.map((e) => e.toLowerCase())).toEqual([String(ep.ID).toLowerCase()]);
        }

        const check = await drive('check');
        expect({ code: check.code, errors: driverLines(check.stderr), out: check.stdout }).toEqual({
          code: 0,
          errors: [],
          out: '',
        });
        const remove = await drive('remove');
        expect({ code: remove.code, errors: driverLines(remove.stderr) }).toEqual({ code: 0, errors: [] });
        const end = await sim.control.dump();
        expect(end.endpoints).toEqual([]);
        for (const n of end.namespaces) expect((n as Record<string, any>).Resources ?? []).toEqual([]);
        for (const c of end.computeSystems) expect(c.Endpoints).toEqual([]);
        const attachments = path.join(dir, 'state', 'attachments');
        expect(fs.existsSync(attachments) ? fs.readdirSync(attachments) : []).toEqual([]);
      },
      300_000,
    );
  });
});

/**
 * The node's life as hcn-cni.exe does it under wine (HCN_WINE_SUITE=1), against the simulator on tcp:127.0.0.1:
 * `install` into a containerd 2.x layout (config.toml version 3, bin_dirs, Windows paths) — the executable installs
 * itself as hcn-cni-standalone.exe and the shim as hcn-cni.exe, the conflist at cniVersion 1.1.0 with the pod CIDR;
 * a second run changes nothing; then a pod ADDed by the installed standalone executable, `uninstall` refusing while it
 * is attached, and `uninstall --force` doing what its dry run printed: the pod's endpoint gone, the files gone.
 * Windows' refusal to replace a running .exe is not reproduced by wine (test/install/install.test.ts simulates it).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startSimulator, type RunningSimulator } from '../../src/sim';
import { WineCni } from './helpers/cni-wine';
import { describeWine, installSystem32, warmWineserver, winePrefix, winPath, WineTimings } from './helpers/wine';

describeWine('hcn-cni.exe install / uninstall under wine', (build) => {
  let sim: RunningSimulator;
  let work: string;
  let cni: WineCni;
  const timings = new WineTimings();
  let bin: string;
  let conf: string;
  let config: string;
  let template: string;
  let shim: string;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-wine-install-'));
    const prefix = winePrefix('main');
    installSystem32(prefix, ['computenetwork.dll', 'vmcompute.dll']);
    warmWineserver(prefix);
    sim = await startSimulator({ listen: 'tcp:127.0.0.1:0', logLevel: 'warn' });
    cni = new WineCni(prefix, build.exe, sim, path.join(work, 'state'), timings);
    bin = path.join(work, 'opt', 'cni', 'bin');
    conf = path.join(work, 'etc', 'cni', 'net.d');
    config = path.join(work, 'config.toml');
    fs.writeFileSync(
      config,
      `version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = ['${winPath(bin)}', 'C:\\Program Files\\containerd\\cni\\bin']\n  conf_dir = '${winPath(conf)}'\n`,
    );
    template = path.join(work, 'template.conflist');
    fs.writeFileSync(
      template,
      JSON.stringify({
        cniVersion: '1.0.0',
        name: 'cbr0',
        plugins: [
          {
            type: 'hcn-cni',
            createNetwork: true,
            subnet: '__POD_SUBNET__',
            stateDir: winPath(path.join(work, 'state')),
          },
        ],
      }),
    );
    shim = path.join(work, 'hcn-cni-shim.exe');
    fs.writeFileSync(shim, 'the shim');
  }, 180_000);

  afterAll(async () => {
    await sim?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
    console.log(timings.format('wine timings (install / uninstall)'));
  });

  const dirs = ['--containerd-config', '', '--conflist', '', '--shim', ''];
  const installArgs = () => {
    const a = dirs.slice();
    a[1] = winPath(config);
    a[3] = winPath(template);
    a[5] = winPath(shim);
    return ['install', ...a, '--pod-cidr', '10.244.9.0/24'];
  };

  it('installs itself and the shim where config.toml says, and the conflist at 1.1.0; a rerun changes nothing', async () => {
    const first = await cni.call({ args: installArgs() }, 'hcn-cni.exe install');
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: '' });
    expect(first.stdout).toContain(
      `bin directory ${winPath(bin)} ([plugins.'io.containerd.cri.v1.runtime'.cni] bin_dirs[0]`,
    );
    expect(fs.readFileSync(path.join(bin, 'hcn-cni.exe'), 'utf8')).toBe('the shim');
    expect(fs.readFileSync(path.join(bin, 'hcn-cni-standalone.exe')).equals(fs.readFileSync(build.exe))).toBe(true);
    const installed = JSON.parse(fs.readFileSync(path.join(conf, '10-hcn-cni.conflist'), 'utf8'));
    expect(installed).toMatchObject({ cniVersion: '1.1.0', plugins: [{ subnet: '10.244.9.0/24' }] });

    const again = await cni.call({ args: installArgs() }, 'hcn-cni.exe install (again)');
    expect(again.code).toBe(0);
    expect(again.stdout.match(/is up to date/g)).toHaveLength(3);
  }, 180_000);

  it('uninstall refuses while a pod is attached; --force does what its dry run printed', async () => {
    // A pod, ADDed by the installed standalone executable with the installed conflist's configuration.
    const installed = JSON.parse(fs.readFileSync(path.join(conf, '10-hcn-cni.conflist'), 'utf8'));
    const podConf = { cniVersion: installed.cniVersion, name: installed.name, ...installed.plugins[0] };
    const standalone = new WineCni(
      cni.prefix,
      path.join(bin, 'hcn-cni-standalone.exe'),
      sim,
      path.join(work, 'state'),
      timings,
    );
    const add = await standalone.call(
      { verb: 'ADD', conf: podConf, containerId: 'pod-w', netns: await cni.newNamespace() },
      'installed ADD',
    );
    expect(add.code).toBe(0);
    const epsBefore = (await sim.control.dump()).endpoints.map((e) => e.Name);
    expect(epsBefore).toHaveLength(1);

    const un = (extra: string[]) =>
      cni.call(
        { args: ['uninstall', '--containerd-config', winPath(config), ...extra] },
        `hcn-cni.exe uninstall ${extra.join(' ')}`,
      );
    const refused = await un([]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(
      /^hcn-cni uninstall: 1 pod\(s\) still attached \(pod-w@eth0\); nothing was changed/,
    );
    expect((await sim.control.dump()).endpoints.map((e) => e.Name)).toEqual(epsBefore);

    const lines = (s: string) =>
      s
        .split(/\r?\n/)
        .filter((l) => /^(\(dry run\) )?(DEL pod|delete|remove|leave) /.test(l))
        .map((l) => l.replace('(dry run) ', ''));
    const dry = await un(['--force', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(lines(dry.stdout)).toEqual([
      expect.stringMatching(/^DEL pod pod-w@eth0: endpoint hcn-ep-/),
      `remove shim ${winPath(path.join(bin, 'hcn-cni.exe'))}`,
      `remove standalone executable ${winPath(path.join(bin, 'hcn-cni-standalone.exe'))}`,
      // The addon the installed executable extracted beside itself when it ran the ADD.
      expect.stringMatching(/^remove extracted addon .*\\hcn-cni-[0-9a-f]{16}$/),
      // The conflist last: a failed run leaves it (the state directory, the IPAM) for the next.
      `remove conflist ${winPath(path.join(conf, '10-hcn-cni.conflist'))}`,
      expect.stringMatching(/^leave 1 network\(s\) and 0 endpoint\(s\) not named by hcn-cni/),
    ]);
    const real = await un(['--force']);
    expect({ code: real.code, stderr: real.stderr }).toEqual({ code: 0, stderr: '' });
    expect(lines(real.stdout)).toEqual(lines(dry.stdout));
    expect((await sim.control.dump()).endpoints).toEqual([]);
    expect(fs.readdirSync(bin)).toEqual([]);
    expect(fs.readdirSync(conf)).toEqual([]);
  }, 240_000);
});

/**
 * `hcn-cni install` run in-process (src/cli/install.ts) on Linux: into a containerd 1.x layout (config version 2)
 * and a 2.x one (version 3, bin_dirs), with the pod CIDR given or read from a fake Kubernetes API on 127.0.0.1
 * (HTTP, and HTTPS checked against the service account's CA); idempotent; a dry run says what the real run does and
 * changes nothing; every refusal is one line and installs nothing. The "target in use" rename-aside is
 * src/install/file-install.ts with a target that refuses to be replaced, as Windows refuses for a running .exe.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as https from 'https';
import type { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { runInstall } from '../../src/cli/install';
import { installFile, type FileOps } from '../../src/install/file-install';
import { realFileOps } from '../../src/cli/file-ops';

const TEMPLATE = {
  cniVersion: '1.1.0',
  name: 'cbr0',
  plugins: [
    {
      type: 'hcn-cni',
      mode: 'bridge',
      networkName: 'cbr0',
      networkType: 'L2Bridge',
      createNetwork: true,
      subnet: '__POD_SUBNET__',
    },
  ],
};

let work: string;
let n = 0;

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-install-'));
});
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

interface Node {
  dir: string;
  bin: string;
  conf: string;
  config: string;
  exe: string;
  shim: string;
  template: string;
  sa: string;
}

function node(form: 'v2' | 'v3', template: unknown = TEMPLATE): Node {
  const dir = path.join(work, `node${++n}`);
  const nd: Node = {
    dir,
    bin: path.join(dir, 'opt', 'cni', 'bin'),
    conf: path.join(dir, 'etc', 'cni', 'net.d'),
    config: path.join(dir, 'config.toml'),
    exe: path.join(dir, 'image', 'hcn-cni'),
    shim: path.join(dir, 'image', 'hcn-cni-shim'),
    template: path.join(dir, 'image', 'conflist'),
    sa: path.join(dir, 'sa'),
  };
  fs.mkdirSync(path.dirname(nd.exe), { recursive: true });
  fs.mkdirSync(nd.sa);
  fs.writeFileSync(nd.exe, 'standalone v1');
  fs.writeFileSync(nd.shim, 'shim v1');
  fs.writeFileSync(nd.template, JSON.stringify(template));
  fs.writeFileSync(path.join(nd.sa, 'token'), 'the-token\n');
  fs.writeFileSync(
    nd.config,
    form === 'v2'
      ? `version = 2\n[plugins."io.containerd.grpc.v1.cri".cni]\n  bin_dir = ${JSON.stringify(nd.bin)}\n  conf_dir = ${JSON.stringify(nd.conf)}\n`
      : `version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = [${JSON.stringify(nd.bin)}, '/usr/lib/cni']\n  conf_dir = ${JSON.stringify(nd.conf)}\n`,
  );
  return nd;
}

async function install(nd: Node, extra: string[] = [], env: NodeJS.ProcessEnv = {}) {
  let out = '';
  let err = '';
  const code = await runInstall(
    [
      '--containerd-config',
      nd.config,
      '--executable',
      nd.exe,
      '--conflist',
      nd.template,
      '--service-account',
      nd.sa,
      ...extra,
    ],
    { env, platform: 'linux', out: (s) => (out += s), err: (s) => (err += s) },
  );
  return { code, out, err };
}

function conflist(nd: Node): Record<string, any> {
  return JSON.parse(fs.readFileSync(path.join(nd.conf, '10-hcn-cni.conflist'), 'utf8'));
}

/** A fake API server answering GET /api/v1/nodes/NAME, recording what it was asked. */
async function fakeApi(
  answer: (req: http.IncomingMessage) => { status: number; body: unknown },
  tls?: { key: string; cert: string },
): Promise<{ url: string; asked: Array<{ url?: string; auth?: string }>; close: () => Promise<void> }> {
  const asked: Array<{ url?: string; auth?: string }> = [];
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    asked.push({
      ...(req.url ? { url: req.url } : {}),
      ...(req.headers.authorization ? { auth: req.headers.authorization } : {}),
    });
    const a = answer(req);
    res.writeHead(a.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(a.body));
  };
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    asked,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function selfSigned(dir: string): { key: string; cert: string } {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  const r = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(r.stderr);
  return { key: fs.readFileSync(key, 'utf8'), cert: fs.readFileSync(cert, 'utf8') };
}

describe('hcn-cni install', () => {
  it('containerd 1.x layout: shim as hcn-cni, the executable beside it, the conflist at cniVersion 1.0.0 with the given pod CIDR', async () => {
    const nd = node('v2');
    const r = await install(nd, ['--pod-cidr', '10.244.3.0/24']);
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(fs.readFileSync(path.join(nd.bin, 'hcn-cni'), 'utf8')).toBe('shim v1');
    expect(fs.readFileSync(path.join(nd.bin, 'hcn-cni-standalone'), 'utf8')).toBe('standalone v1');
    expect(conflist(nd)).toMatchObject({ cniVersion: '1.0.0', plugins: [{ subnet: '10.244.3.0/24' }] });
    expect(r.out).toContain('cniVersion 1.0.0 (what containerd 1.7 and 2.x both accept)');
    expect(fs.readdirSync(nd.bin).sort()).toEqual(['hcn-cni', 'hcn-cni-standalone']);
  });

  it('containerd 2.x layout: the first of bin_dirs, cniVersion 1.1.0', async () => {
    const nd = node('v3');
    const r = await install(nd, ['--pod-cidr', '10.244.4.0/24']);
    expect(r.code).toBe(0);
    expect(fs.existsSync(path.join(nd.bin, 'hcn-cni'))).toBe(true);
    expect(conflist(nd).cniVersion).toBe('1.1.0');
  });

  it('is idempotent: a second run changes no file and says so; a new executable replaces only itself', async () => {
    const nd = node('v2');
    await install(nd, ['--pod-cidr', '10.244.3.0/24']);
    const before = fs.readdirSync(nd.bin).map((f) => fs.statSync(path.join(nd.bin, f)).ino);
    const again = await install(nd, ['--pod-cidr', '10.244.3.0/24']);
    expect(again.code).toBe(0);
    expect(again.out.match(/is up to date/g)).toHaveLength(3);
    expect(fs.readdirSync(nd.bin).map((f) => fs.statSync(path.join(nd.bin, f)).ino)).toEqual(before);
    fs.writeFileSync(nd.exe, 'standalone v2');
    const upgrade = await install(nd, ['--pod-cidr', '10.244.3.0/24']);
    expect(upgrade.out).toMatch(/standalone executable .*hcn-cni-standalone: replaced/);
    expect(upgrade.out).toMatch(/shim .*hcn-cni: is up to date/);
    expect(fs.readFileSync(path.join(nd.bin, 'hcn-cni-standalone'), 'utf8')).toBe('standalone v2');
  });

  it('standalone mode installs the executable itself as hcn-cni and no shim', async () => {
    const nd = node('v2');
    fs.rmSync(nd.shim);
    const r = await install(nd, ['--pod-cidr', '10.244.3.0/24', '--mode', 'standalone']);
    expect(r.code).toBe(0);
    expect(fs.readFileSync(path.join(nd.bin, 'hcn-cni'), 'utf8')).toBe('standalone v1');
    expect(fs.readdirSync(nd.bin)).toEqual(['hcn-cni']);
  });

  it('a dry run prints what the real run then does, and writes nothing', async () => {
    const nd = node('v3');
    const dry = await install(nd, ['--pod-cidr', '10.244.3.0/24', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(fs.existsSync(nd.bin)).toBe(false);
    expect(fs.existsSync(nd.conf)).toBe(false);
    const real = await install(nd, ['--pod-cidr', '10.244.3.0/24']);
    const steps = (s: string) =>
      s
        .split('\n')
        .filter((l) => /^(\(dry run\) )?(standalone executable|shim|conflist) /.test(l))
        .map((l) => l.replace('(dry run) ', ''));
    expect(steps(dry.out)).toHaveLength(3);
    expect(steps(dry.out)).toEqual(steps(real.out));
  });

  it('reads the pod CIDRs of the node from the API with the service account token (HTTP fake on 127.0.0.1)', async () => {
    const api = await fakeApi(() => ({
      status: 200,
      body: { spec: { podCIDR: '10.244.7.0/24', podCIDRs: ['10.244.7.0/24', 'fd00:10:244:7::/64'] } },
    }));
    try {
      const nd = node('v3');
      const r = await install(nd, ['--api-server', api.url], { NODE_NAME: 'win-node-7' });
      expect(r).toMatchObject({ code: 0, err: '' });
      expect(api.asked).toEqual([{ url: '/api/v1/nodes/win-node-7', auth: 'Bearer the-token' }]);
      expect(conflist(nd).plugins[0].subnet).toEqual(['10.244.7.0/24', 'fd00:10:244:7::/64']);
      expect(r.out).toContain('pod CIDR 10.244.7.0/24, fd00:10:244:7::/64 (the node, from the API)');
    } finally {
      await api.close();
    }
  });

  it('HTTPS: the server is checked against the service account ca.crt; another CA is refused in one line', async () => {
    const tls = selfSigned(work);
    const api = await fakeApi(() => ({ status: 200, body: { spec: { podCIDR: '10.244.8.0/24' } } }), tls);
    try {
      const nd = node('v2');
      fs.writeFileSync(path.join(nd.sa, 'ca.crt'), tls.cert);
      const host = new URL(api.url);
      const ok = await install(nd, [], {
        NODE_NAME: 'n8',
        KUBERNETES_SERVICE_HOST: host.hostname,
        KUBERNETES_SERVICE_PORT: host.port,
      });
      expect(ok).toMatchObject({ code: 0, err: '' });
      expect(conflist(nd).plugins[0].subnet).toBe('10.244.8.0/24');

      const other = node('v2');
      fs.writeFileSync(path.join(other.sa, 'ca.crt'), selfSigned(fs.mkdtempSync(path.join(work, 'ca-'))).cert);
      const bad = await install(other, ['--api-server', api.url, '--node', 'n8']);
      expect(bad.code).toBe(1);
      expect(bad.err).toMatch(
        /^hcn-cni install: could not read node n8 from https:\/\/127\.0\.0\.1:\d+: .*; set --pod-cidr/,
      );
      expect(bad.err.trim().split('\n')).toHaveLength(1);
      expect(fs.existsSync(other.bin)).toBe(false);
    } finally {
      await api.close();
    }
  });

  it.each([
    [
      { status: 403, body: { kind: 'Status' } },
      /answered 403 .*for node n9 \(the service account needs "get" on nodes\)/,
    ],
    [{ status: 200, body: { spec: {} } }, /node n9 has no spec\.podCIDR/],
    [{ status: 404, body: {} }, /answered 404/],
  ])('refuses in one line and installs nothing when the API says %j', async (answer, message) => {
    const api = await fakeApi(() => answer);
    try {
      const nd = node('v2');
      const r = await install(nd, ['--api-server', api.url, '--node', 'n9']);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(message);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(fs.existsSync(nd.bin)).toBe(false);
      expect(fs.existsSync(nd.conf)).toBe(false);
    } finally {
      await api.close();
    }
  });

  it.each([
    [
      'a conflist every ADD would fail',
      { ...TEMPLATE, plugins: [{ type: 'hcn-cni', mode: 'nope' }] },
      /would fail every ADD: .*mode/,
    ],
    ['no hcn-cni plugin', { ...TEMPLATE, plugins: [{ type: 'bridge' }] }, /has 0 plugins of "type": "hcn-cni"/],
    ['not a conflist', { type: 'hcn-cni' }, /is not a conflist/],
  ])('refuses %s in one line, installing nothing', async (_what, template, message) => {
    const nd = node('v2', template);
    const r = await install(nd, ['--pod-cidr', '10.244.3.0/24']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(message);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(fs.existsSync(nd.bin)).toBe(false);
  });

  it('refuses without a pod CIDR source, a missing shim, or an unreadable config', async () => {
    const a = node('v2');
    expect((await install(a)).err).toMatch(/needs the pod CIDR: give --pod-cidr, or --node \(NODE_NAME\)/);
    const b = node('v2');
    fs.rmSync(b.shim);
    expect((await install(b, ['--pod-cidr', '10.244.3.0/24'])).err).toMatch(/cannot read the shim .*ENOENT/);
    const c = node('v2');
    fs.writeFileSync(c.config, 'version = [');
    expect((await install(c, ['--pod-cidr', '10.244.3.0/24'])).err).toMatch(/config\.toml is not valid TOML/);
    for (const nd of [a, b, c]) expect(fs.existsSync(nd.bin)).toBe(false);
  });

  it('--bin-dir and --conf-dir win over config.toml', async () => {
    const nd = node('v2');
    const bin = path.join(nd.dir, 'elsewhere', 'bin');
    const conf = path.join(nd.dir, 'elsewhere', 'conf');
    const r = await install(nd, ['--pod-cidr', '10.244.3.0/24', '--bin-dir', bin, '--conf-dir', conf]);
    expect(r.code).toBe(0);
    expect(fs.existsSync(path.join(bin, 'hcn-cni'))).toBe(true);
    expect(fs.existsSync(path.join(conf, '10-hcn-cni.conflist'))).toBe(true);
    expect(fs.existsSync(nd.bin)).toBe(false);
  });
});

describe("containerd's config.toml imports, as containerd merges them", () => {
  it('reads the CNI section from imported files: globs in sorted order, relative to the importing file, later files winning key by key', async () => {
    const nd = node('v3');
    const dropIns = path.join(nd.dir, 'conf.d');
    fs.mkdirSync(dropIns);
    // config.toml sets neither directory itself; a version 2 drop-in (migrated: the same section) sets both, a later
    // version 3 one only conf_dir; a nested import names config.toml again (containerd loads each file once).
    fs.writeFileSync(nd.config, `version = 3\nimports = ["conf.d/*.toml"]\n`);
    fs.writeFileSync(
      path.join(dropIns, '10-cni.toml'),
      `version = 2\nimports = [${JSON.stringify(nd.config)}]\n[plugins."io.containerd.grpc.v1.cri".cni]\n  bin_dir = ${JSON.stringify(nd.bin)}\n  conf_dir = "/nowhere"\n`,
    );
    fs.writeFileSync(
      path.join(dropIns, '20-conf.toml'),
      `version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  conf_dir = ${JSON.stringify(nd.conf)}\n`,
    );
    fs.writeFileSync(path.join(dropIns, 'notes.txt'), 'conf_dir = "/not-toml"');
    const r = await install(nd, ['--pod-cidr', '10.244.3.0/24']);
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: '' });
    expect(r.out).toContain(
      `bin directory ${nd.bin} ([plugins."io.containerd.grpc.v1.cri".cni] bin_dir in ${path.join(dropIns, '10-cni.toml')})`,
    );
    expect(r.out).toContain(
      `conf directory ${nd.conf} ([plugins.'io.containerd.cri.v1.runtime'.cni] conf_dir in ${path.join(dropIns, '20-conf.toml')})`,
    );
    // A version 3 file among them: containerd 2.x.
    expect(conflist(nd).cniVersion).toBe('1.1.0');
    expect(fs.existsSync(path.join(nd.bin, 'hcn-cni'))).toBe(true);
  });

  it('an imported file that is not there stops containerd: refused in one line', async () => {
    const nd = node('v2');
    fs.appendFileSync(nd.config, 'imports = ["cri.toml"]\n');
    fs.writeFileSync(nd.config, `imports = ["cri.toml"]\n${fs.readFileSync(nd.config, 'utf8')}`);
    const r = await install(nd, ['--pod-cidr', '10.244.3.0/24']);
    expect({ code: r.code, err: r.err }).toEqual({
      code: 1,
      err: `hcn-cni install: cannot read ${path.join(nd.dir, 'cri.toml')}, imported by ${nd.config}: ENOENT\n`,
    });
    expect(fs.existsSync(nd.bin)).toBe(false);
  });
});

describe('odd directories: the dry run asks what the real run asks, and every refusal is one line', () => {
  /** The refusal without the run's temporary-file stamp, which differs between two runs. */
  const same = (s: string) => s.replace(/\.tmp-[0-9-]+/g, '.tmp-STAMP');

  it.each([
    [
      'the bin directory is a dangling symlink (a volume not mounted)',
      (nd: Node) => {
        fs.mkdirSync(path.dirname(nd.bin), { recursive: true });
        fs.symlinkSync(path.join(nd.dir, 'not-mounted'), nd.bin);
      },
    ],
    [
      'the bin directory is a file',
      (nd: Node) => {
        fs.mkdirSync(path.dirname(nd.bin), { recursive: true });
        fs.writeFileSync(nd.bin, 'x');
      },
    ],
    [
      'a directory on the way to the bin directory is a file',
      (nd: Node) => {
        fs.mkdirSync(path.dirname(path.dirname(nd.bin)), { recursive: true });
        fs.writeFileSync(path.dirname(nd.bin), 'x');
      },
    ],
    ['the plugin file is a directory', (nd: Node) => fs.mkdirSync(path.join(nd.bin, 'hcn-cni'), { recursive: true })],
    [
      'the conflist is a directory',
      (nd: Node) => fs.mkdirSync(path.join(nd.conf, '10-hcn-cni.conflist'), { recursive: true }),
    ],
    [
      'the conf directory is a file',
      (nd: Node) => {
        fs.mkdirSync(path.dirname(nd.conf), { recursive: true });
        fs.writeFileSync(nd.conf, 'x');
      },
    ],
  ])('%s', async (_what, make) => {
    const nd = node('v2');
    make(nd);
    const before = fs.readdirSync(nd.dir, { recursive: true }).sort();
    const dry = await install(nd, ['--pod-cidr', '10.244.3.0/24', '--dry-run']);
    expect(fs.readdirSync(nd.dir, { recursive: true }).sort()).toEqual(before);
    const real = await install(nd, ['--pod-cidr', '10.244.3.0/24']);
    expect(real.code).toBe(1);
    expect(real.err).toMatch(/^hcn-cni install: [^\n]*(ENOENT|EEXIST|ENOTDIR|EISDIR)[^\n]*\n$/);
    expect({ code: dry.code, err: same(dry.err) }).toEqual({ code: real.code, err: same(real.err) });
  });
});

describe('another configuration that containerd runs first', () => {
  it('is named in a warning (dry run and real run); directories, other extensions and later names are not', async () => {
    const nd = node('v2');
    fs.mkdirSync(nd.conf, { recursive: true });
    fs.writeFileSync(path.join(nd.conf, '05-flannel.conflist'), '{}');
    fs.writeFileSync(path.join(nd.conf, '01-calico.conf'), '{}');
    fs.writeFileSync(path.join(nd.conf, '00-notes.txt'), '');
    fs.writeFileSync(path.join(nd.conf, '00-backup.CONFLIST'), '{}');
    fs.mkdirSync(path.join(nd.conf, '00-dir.conflist'));
    fs.writeFileSync(path.join(nd.conf, '99-later.conflist'), '{}');
    const warning = `hcn-cni install: warning: containerd runs the first configuration of ${nd.conf} by name, and 01-calico.conf, 05-flannel.conflist sort before 10-hcn-cni.conflist: containerd will not run hcn-cni for new pods until they are removed or renamed to sort after it\n`;
    for (const extra of [['--dry-run'], []]) {
      const r = await install(nd, ['--pod-cidr', '10.244.3.0/24', ...extra]);
      expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: warning });
    }
    fs.rmSync(path.join(nd.conf, '05-flannel.conflist'));
    fs.rmSync(path.join(nd.conf, '01-calico.conf'));
    expect((await install(nd, ['--pod-cidr', '10.244.3.0/24'])).err).toBe('');
  });
});

describe('a target in use (Windows: a running .exe can be renamed, not replaced)', () => {
  /** Real file operations, except that replacing or deleting a file in `running` fails with EPERM. */
  function windowsLike(running: Set<string>): FileOps & { missingAt: string[] } {
    const real = realFileOps();
    const missingAt: string[] = [];
    const ops: FileOps & { missingAt: string[] } = {
      ...real,
      missingAt,
      rename(from, to) {
        if (running.has(to)) throw Object.assign(new Error('EPERM'), { code: 'EPERM' });
        real.rename(from, to);
        if (running.has(from)) {
          running.delete(from);
          running.add(to);
        }
      },
      unlink(f) {
        if (running.has(f)) throw Object.assign(new Error('EPERM'), { code: 'EPERM' });
        real.unlink(f);
      },
    };
    return ops;
  }

  it('renames the running file aside, puts the new one in place, and removes the old one once it has ended', () => {
    const dir = fs.mkdtempSync(path.join(work, 'inuse-'));
    const target = path.join(dir, 'hcn-cni.exe');
    fs.writeFileSync(target, 'old shim');
    const running = new Set([target]);
    const ops = windowsLike(running);
    const o = installFile(ops, Buffer.from('new shim'), target, '1');
    expect(o).toMatchObject({ action: 'replaced-aside', aside: `${target}.old-1` });
    expect(fs.readFileSync(target, 'utf8')).toBe('new shim');
    expect(fs.readFileSync(`${target}.old-1`, 'utf8')).toBe('old shim');

    // Still running at the next install: kept. Ended: removed.
    const again = installFile(ops, Buffer.from('new shim'), target, '2');
    expect(again).toMatchObject({ action: 'unchanged', kept: [`${target}.old-1`] });
    running.clear();
    const later = installFile(ops, Buffer.from('new shim'), target, '3');
    expect(later).toMatchObject({ action: 'unchanged', removed: [`${target}.old-1`] });
    expect(fs.readdirSync(dir)).toEqual(['hcn-cni.exe']);
  });

  it('when the new file cannot be put in place after all, the running one is put back', () => {
    const dir = fs.mkdtempSync(path.join(work, 'inuse-'));
    const target = path.join(dir, 'hcn-cni.exe');
    fs.writeFileSync(target, 'old shim');
    const ops = windowsLike(new Set([target]));
    let renames = 0;
    const rename = ops.rename;
    ops.rename = (from, to) => {
      renames++;
      if (renames === 3) throw Object.assign(new Error('EIO'), { code: 'EIO' });
      rename(from, to);
    };
    expect(() => installFile(ops, Buffer.from('new shim'), target, '1')).toThrow(
      /cannot put .*hcn-cni\.exe in place \(the running one is back\): EIO/,
    );
    expect(fs.readFileSync(target, 'utf8')).toBe('old shim');
    expect(fs.readdirSync(dir)).toEqual(['hcn-cni.exe']);
  });
});

describe("the CNI executable's start-up does not load install", () => {
  it('src/install and smol-toml are reached only through the dynamic imports of src/cli/install.ts and uninstall.ts', () => {
    const src = path.join(__dirname, '..', '..', 'src');
    const files = (dir: string): string[] =>
      fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
        const p = path.join(dir, d.name);
        return d.isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
      });
    const staticImporters: string[] = [];
    for (const f of files(src)) {
      const rel = path.relative(src, f);
      if (
        rel.startsWith(`install${path.sep}`) ||
        rel === path.join('cli', 'install.ts') ||
        rel === path.join('cli', 'uninstall.ts') ||
        // uninstall's own module, imported by uninstall.ts alone
        rel === path.join('cli', 'uninstall-node.ts')
      )
        continue;
      const text = fs.readFileSync(f, 'utf8');
      if (
        /^import\s+(?!type\b)[^;]*from\s+['"](\.\.?\/)+(install\/|install['"])/m.test(text) ||
        /from\s+['"]smol-toml['"]/.test(text)
      )
        staticImporters.push(rel);
    }
    expect(staticImporters).toEqual([]);
    const entry = fs.readFileSync(path.join(src, 'cli', 'hcn-cni.ts'), 'utf8');
    expect(entry).toMatch(/await import\('\.\/install'\)/);
    expect(entry).toMatch(/await import\('\.\/uninstall'\)/);
  });
});

/**
 * containerd's CNI directories from its config.toml, for each form containerd has used (fixtures in
 * test/install/fixtures, each naming what it follows), a missing file or section, and configs that are refused
 * in one line rather than guessed at.
 */
import * as fs from 'fs';
import * as path from 'path';
import { cniDirsFromConfig, cniDirsFromConfigs } from '../../src/install/containerd-config';
import { loadContainerdConfig } from '../../src/install/containerd-imports';
import { InstallRefusal } from '../../src/install/refusal';

const FIX = path.join(__dirname, 'fixtures');
const read = (name: string) => fs.readFileSync(path.join(FIX, name), 'utf8');

describe('containerd config.toml → CNI directories', () => {
  it.each([
    ['containerd-1.7-sig-windows-tools.toml', 'c:/opt/cni/bin', ['c:/opt/cni/bin'], 'c:/etc/cni/net.d', 'v2', '1.0.0'],
    [
      'containerd-2.1-bin-dirs.toml',
      'C:\\opt\\cni\\bin',
      ['C:\\opt\\cni\\bin', 'C:\\Program Files\\containerd\\cni\\bin'],
      'C:\\etc\\cni\\net.d',
      'v3',
      '1.1.0',
    ],
    ['containerd-2.0-bin-dir.toml', 'D:\\k\\cni\\bin', ['D:\\k\\cni\\bin'], 'D:\\k\\cni\\conf', 'v3', '1.1.0'],
    [
      'containerd-2.x-no-cni-section.toml',
      'C:\\Program Files\\containerd\\cni\\bin',
      ['C:\\Program Files\\containerd\\cni\\bin'],
      'C:\\Program Files\\containerd\\cni\\conf',
      'v3',
      '1.1.0',
    ],
  ])('%s → bin directory %s', (file, binDir, binDirs, confDir, form, cniVersion) => {
    const dirs = cniDirsFromConfig(read(file), file, 'win32');
    expect(dirs).toMatchObject({ binDir, binDirs, confDir, form, cniVersion });
  });

  it('says which key gave each directory, or that it is containerd default', () => {
    const v2 = cniDirsFromConfig(read('containerd-1.7-sig-windows-tools.toml'), 'config.toml', 'win32');
    expect(v2.from.binDir).toBe('[plugins."io.containerd.grpc.v1.cri".cni] bin_dir in config.toml');
    const v3 = cniDirsFromConfig(read('containerd-2.1-bin-dirs.toml'), 'config.toml', 'win32');
    expect(v3.from.binDir).toBe("[plugins.'io.containerd.cri.v1.runtime'.cni] bin_dirs[0] in config.toml");
    const none = cniDirsFromConfig(read('containerd-2.x-no-cni-section.toml'), 'config.toml', 'win32');
    expect(none.from.confDir).toMatch(
      /containerd's default \(config.toml has no \[plugins.'io.containerd.cri.v1.runtime'.cni\]\)/,
    );
  });

  it('a version 2 section in a version 3 config is not where containerd 2.x looks: the defaults apply', () => {
    const text = `version = 3\n[plugins."io.containerd.grpc.v1.cri".cni]\n  bin_dir = 'C:\\opt\\cni\\bin'\n`;
    expect(cniDirsFromConfig(text, 'c.toml', 'win32').binDir).toBe('C:\\Program Files\\containerd\\cni\\bin');
  });

  it('a config without version is version 1: [plugins.cri.cni]', () => {
    const text = `[plugins.cri.cni]\n  bin_dir = 'C:\\cni\\bin'\n  conf_dir = 'C:\\cni\\conf'\n`;
    expect(cniDirsFromConfig(text, 'c.toml', 'win32')).toMatchObject({
      binDir: 'C:\\cni\\bin',
      confDir: 'C:\\cni\\conf',
      form: 'v1',
      cniVersion: '1.0.0',
    });
  });

  it('no config.toml: containerd defaults, and the cniVersion both 1.7 and 2.x accept', () => {
    expect(cniDirsFromConfig(undefined, 'C:\\Program Files\\containerd\\config.toml', 'win32')).toMatchObject({
      binDir: 'C:\\Program Files\\containerd\\cni\\bin',
      confDir: 'C:\\Program Files\\containerd\\cni\\conf',
      form: 'none',
      cniVersion: '1.0.0',
    });
  });

  it.each([
    [
      'version = 3\n[plugins\n',
      /c\.toml is not valid TOML \(.*\); give the directories with --bin-dir and --conf-dir$/,
    ],
    ['version = 9\n', /c\.toml has config version 9, which no containerd this knows reads/],
    [
      "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = []\n",
      /bin_dirs is not a list of directories: \[\]/,
    ],
    ['version = 2\n[plugins."io.containerd.grpc.v1.cri".cni]\n  bin_dir = 7\n', /bin_dir is not a directory: 7/],
    ['version = 2\n[plugins."io.containerd.grpc.v1.cri".cni]\n  conf_dir = ""\n', /conf_dir is not a directory: ""/],
    [
      'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\ncni = 1\n',
      /c\.toml: \[plugins."io.containerd.grpc.v1.cri".cni\] is not a table$/,
    ],
  ])('refuses %j in one line', (text, message) => {
    let err: unknown;
    try {
      cniDirsFromConfig(text, 'c.toml', 'win32');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InstallRefusal);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain('\n');
  });
});

describe("config.toml's imports, resolved as containerd resolves them", () => {
  /** An in-memory file system: path → text; directories are the paths' prefixes. */
  const reader = (files: Record<string, string>) => ({
    read(f: string) {
      if (!(f in files)) throw Object.assign(new Error(`ENOENT: ${f}`), { code: 'ENOENT' });
      return files[f]!;
    },
    list(d: string) {
      const names = new Set<string>();
      for (const f of Object.keys(files)) if (f.startsWith(`${d}/`)) names.add(f.slice(d.length + 1).split('/')[0]!);
      if (names.size === 0) throw Object.assign(new Error(`ENOENT: ${d}`), { code: 'ENOENT' });
      return [...names].reverse();
    },
  });

  it('loads config.toml, then its imports in order (globs: each directory matched, names sorted), each file once', () => {
    const files = loadContainerdConfig(
      '/etc/containerd/config.toml',
      'linux',
      reader({
        '/etc/containerd/config.toml':
          'version = 3\nimports = ["conf.d/*/cni-?.toml", "/abs/[ab]*.toml", "none/*.toml"]\n',
        '/etc/containerd/conf.d/b/cni-1.toml': 'imports = ["../../config.toml"]\n',
        '/etc/containerd/conf.d/a/cni-2.toml': '',
        '/etc/containerd/conf.d/a/cni-1.toml': '',
        '/etc/containerd/conf.d/a/cni-10.toml': '',
        '/abs/b.toml': '',
        '/abs/c.toml': '',
      }),
    );
    expect(files.map((f) => f.source)).toEqual([
      '/etc/containerd/config.toml',
      '/etc/containerd/conf.d/a/cni-1.toml',
      '/etc/containerd/conf.d/a/cni-2.toml',
      '/etc/containerd/conf.d/b/cni-1.toml',
      '/abs/b.toml',
    ]);
  });

  it('no config.toml: none (containerd runs on its defaults); an import that is not there: refused — without a `*` a pattern is a path', () => {
    expect(loadContainerdConfig('/etc/containerd/config.toml', 'linux', reader({}))).toEqual([]);
    expect(() =>
      loadContainerdConfig('/c/config.toml', 'linux', reader({ '/c/config.toml': 'imports = ["cri.toml"]\n' })),
    ).toThrow(new InstallRefusal('cannot read /c/cri.toml, imported by /c/config.toml: ENOENT'));
    expect(() =>
      loadContainerdConfig('/c/config.toml', 'linux', reader({ '/c/config.toml': 'imports = "cri.toml"\n' })),
    ).toThrow(/imports is not a list of files/);
    expect(() =>
      loadContainerdConfig(
        '/c/config.toml',
        'linux',
        reader({ '/c/config.toml': 'imports = ["[ab].toml"]\n', '/c/a.toml': '' }),
      ),
    ).toThrow(new InstallRefusal('cannot read /c/[ab].toml, imported by /c/config.toml: ENOENT'));
  });

  it('merges key by key, a later file winning, each file read in its own form', () => {
    const dirs = cniDirsFromConfigs(
      [
        {
          text: 'version = 3\n[plugins."io.containerd.cri.v1.runtime".cni]\nbin_dirs = ["/a", "/b"]\nconf_dir = "/c1"\n',
          source: 'main',
        },
        { text: 'version = 2\n[plugins."io.containerd.grpc.v1.cri".cni]\nconf_dir = "/c2"\n', source: 'drop-in' },
      ],
      'main',
      'linux',
    );
    expect(dirs).toMatchObject({ binDirs: ['/a', '/b'], confDir: '/c2', form: 'v3', cniVersion: '1.1.0' });
    expect(dirs.from.confDir).toBe('[plugins."io.containerd.grpc.v1.cri".cni] conf_dir in drop-in');
  });
});

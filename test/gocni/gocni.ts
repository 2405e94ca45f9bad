/**
 * containerd's own CNI library (github.com/containerd/go-cni over libcni, Debian's golang-github-containerd-go-cni-dev)
 * as the runtime: the driver in test/gocni/driver is built offline for Linux and Windows, and each deploy/ conflist is
 * run through it — Setup with CRI's capability arguments (portMappings, dns) and labels, Check, Remove — for a GUID
 * netns (containerd) and `none` (Docker-style). Shared by test/gocni/gocni.test.ts (Linux) and
 * test/windows/gocni.test.ts (wine). Not a test file itself.
 *
 * A missing `go` skips with a visible message locally; with CI=true it fails (.ci/run installs golang-go and the
 * go-cni package), as the wine suite does for wine.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

export const ROOT = path.join(__dirname, '..', '..');
export const DEPLOY = path.join(ROOT, 'deploy');
export const IS_CI = /^(true|1)$/i.test(process.env.CI ?? '');
export const GOPATH = '/usr/share/gocode';
const GO_CNI = path.join(GOPATH, 'src', 'github.com', 'containerd', 'go-cni');

/** The MAC of the simulator's default second adapter ("Ethernet 2", src/sim/host.ts): the delegated NIC. */
export const NIC_MAC = '00-15-5D-AA-00-02';
export const PORTMAP = [{ HostPort: 8080, ContainerPort: 80, Protocol: 'tcp', HostIP: '' }];
export const DNS = { Servers: ['10.96.0.10'], Searches: ['default.svc.cluster.local'], Options: ['ndots:5'] };

export type GoCheck = { ok: true } | { ok: false; reason: string };

export function goAvailable(): GoCheck {
  if (spawnSync('go', ['version']).status !== 0)
    return { ok: false, reason: 'go is not installed (apt-get install golang-go)' };
  if (!fs.existsSync(GO_CNI))
    return { ok: false, reason: `${GO_CNI} is missing (apt-get install golang-github-containerd-go-cni-dev)` };
  return { ok: true };
}

/** describe() that runs when go and go-cni are there; otherwise a visible skip, or with CI=true a failing test. */
export function describeGo(title: string, fn: () => void): void {
  const check = goAvailable();
  if (check.ok) {
    describe(title, fn);
    return;
  }
  if (IS_CI) {
    describe(title, () => {
      test('go and go-cni are available (required with CI=true)', () => {
        throw new Error(`the go-cni suite cannot run: ${check.reason}`);
      });
    });
    return;
  }
  console.warn(`SKIPPED "${title}": ${check.reason}`);
  describe(title, () => {
    test.skip(`SKIPPED: ${check.reason}`, () => undefined);
  });
}

/** Builds the driver for `goos` (offline: GOPATH mode over Debian's packages, GOFLAGS=-mod=mod not involved). */
export function buildDriver(goos: 'linux' | 'windows'): string {
  const dir = path.join(os.tmpdir(), 'hcn-cni-gocni');
  fs.mkdirSync(dir, { recursive: true });
  const out = path.join(dir, goos === 'windows' ? 'driver.exe' : 'driver');
  const built = spawnSync('go', ['build', '-o', out, './test/gocni/driver'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 10 * 60_000,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME ?? dir,
      GO111MODULE: 'off',
      GOPATH,
      GOOS: goos,
      GOARCH: 'amd64',
      CGO_ENABLED: '0',
      GOCACHE: path.join(dir, 'cache'),
      GOFLAGS: '',
    },
  });
  if (built.status !== 0) throw new Error(`go build (${goos}) failed:\n${built.stdout}${built.stderr}`);
  return out;
}

export const DEPLOY_CONFLISTS = fs
  .readdirSync(DEPLOY)
  .filter((f) => f.endsWith('.conflist'))
  .sort();

/** The newest CNI version go-cni 1.1.7's libcni (1.1.2) accepts in a result. */
export const LIBCNI_MAX = '1.0.0';

export function newerThanLibcni(version: string): boolean {
  const [a, b, c] = version.split('.').map(Number);
  return a! > 1 || (a === 1 && (b! > 0 || c! > 0));
}

/** Lines of a stderr that are not the plugin's JSON log lines: the driver's own messages (errors). */
export function driverLines(stderr: string): string[] {
  return stderr.split(/\r?\n/).filter((l) => l.trim() !== '' && !l.startsWith('{'));
}

export type Conflist = { cniVersion: string; name: string; plugins: Array<Record<string, any>> };

export function readConflist(file: string): Conflist {
  return JSON.parse(fs.readFileSync(path.join(DEPLOY, file), 'utf8')) as Conflist;
}

/**
 * What a node's own files replace in a deploy conflist: where state, logs and IPAM data live (Windows paths in the
 * examples), nothing else. `rewrite` gives the host's form of a path.
 */
export function forNode(conf: Conflist, dirs: { state: string; ipam: string; log?: string }): Conflist {
  const copy = JSON.parse(JSON.stringify(conf)) as Conflist;
  // go-cni 1.1.7 runs libcni 1.1.2, whose results go up to CNI 1.0.0 (containernetworking/cni pkg/version/version.go
  // All); a 1.1.0 result makes its Setup fail after the ADD ("unsupported CNI result version"), which the suites show
  // on its own. The conflists are run at the newest version that runtime speaks.
  if (newerThanLibcni(copy.cniVersion)) copy.cniVersion = LIBCNI_MAX;
  for (const p of copy.plugins) {
    if (p.type !== 'hcn-cni') continue;
    p.stateDir = dirs.state;
    if (dirs.log) p.logFile = dirs.log;
    else delete p.logFile;
    p.logLevel = 'debug';
    if (p.ipam?.dataDir !== undefined) p.ipam.dataDir = dirs.ipam;
  }
  return copy;
}

/** The netns kinds a conflist is run with: a delegated NIC moves a NIC into a namespace, so GUID only. */
export function netnsKinds(file: string): Array<'guid' | 'none'> {
  return /delegated/.test(file) ? ['guid'] : ['guid', 'none'];
}

/** Extra driver arguments a conflist needs: the mac capability for a delegated NIC. */
export function extraArgs(file: string): string[] {
  return /delegated/.test(file) ? ['-mac', NIC_MAC] : [];
}

/**
 * On Linux, the shim talks only to the real service. Whoever listens at the service address gets
 * the runtime's whole environment and the configuration and chooses the result, so before it sends a byte the shim
 * reads the server's uid (SO_PEERCRED, native/shim/shim_posix.cc): root's or its own user's socket is used; any
 * other uid's is refused with one stderr line naming that uid, and hcn-cni-standalone runs the request instead.
 * The squatter here is a real process of another uid (nobody, 65534, through util-linux setpriv), listening in a
 * directory it owns — as anyone could where HCN_CNI_SERVICE points into a directory others can write.
 */
import { spawn, spawnSync, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { bridgeConf, cniEnv, useHarness, type Harness } from '../helpers/cni-harness';
import { newNamespace, recordFiles, until } from '../plugin/support';
import { makeBin, startServiceProcess, viaShim, type Bin } from './support';

const NOBODY = 65534;
let h: Harness;
let bin: Bin;
let squatDir: string;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(60_000);

beforeAll(() => {
  // The tests run as root (the deployed service's user); the squatter must be someone else.
  expect(process.getuid?.()).toBe(0);
  expect(spawnSync('setpriv', ['--version']).status).toBe(0);
});
beforeEach(() => {
  bin = makeBin(h);
  squatDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-squat-'));
  fs.chmodSync(squatDir, 0o755);
  fs.chownSync(squatDir, NOBODY, NOBODY);
});
afterEach(() => fs.rmSync(squatDir, { recursive: true, force: true }));

/**
 * A stand-in for the service run as `uid`: it records how many bytes each connection sent, and answers a whole
 * request with an accepted frame and a forged result (address 6.6.6.6), as a squatter would.
 */
const SQUATTER = `
const net = require('net'), fs = require('fs');
const [address, log] = process.argv.slice(1);
const u32 = (n) => { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b; };
net.createServer((c) => {
  let got = Buffer.alloc(0);
  c.on('error', () => undefined);
  c.on('close', () => fs.appendFileSync(log, 'connection ' + got.length + ' bytes\\n'));
  c.on('data', (d) => {
    got = Buffer.concat([got, d]);
    if (got.length < 20 || got.length < 20 + got.readUInt32LE(12) + got.readUInt32LE(16)) return;
    fs.appendFileSync(log, 'env: ' + got.subarray(20, 20 + got.readUInt32LE(12)).toString().split('\\0').join(' ') + '\\n');
    const out = Buffer.from('{"cniVersion":"1.0.0","ips":[{"address":"6.6.6.6/32"}]}\\n');
    c.end(Buffer.concat([Buffer.from('HCNA'), u32(1), u32(1), Buffer.from('x'), Buffer.from('HCNR'), u32(0), u32(out.length), u32(0), out]));
  });
}).listen(address, () => { fs.chmodSync(address, 0o777); fs.appendFileSync(log, 'listening\\n'); });
`;

interface Squatter {
  address: string;
  log(): string;
  stop(): Promise<void>;
}

async function startSquatter(uid: number): Promise<Squatter> {
  const address = path.join(squatDir, 'service.sock');
  const log = path.join(squatDir, 'squatter.log');
  fs.writeFileSync(log, '');
  fs.chownSync(log, uid, uid);
  const child: ChildProcess = spawn(
    'setpriv',
    [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', process.execPath, '-e', SQUATTER, address, log],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const read = () => fs.readFileSync(log, 'utf8');
  await until(async () => (read().includes('listening') ? true : undefined), 20_000, 'the squatter to listen');
  expect(fs.statSync(address).uid).toBe(uid);
  return {
    address,
    log: read,
    async stop() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

describe('the shim checks who serves the address before it sends anything', () => {
  it('refuses a socket served by another uid: the standalone executable answers, the squatter gets 0 bytes', async () => {
    const squatter = await startSquatter(NOBODY);
    try {
      const ns = await newNamespace(h);
      const add = await viaShim(h, bin, squatter.address, {
        verb: 'ADD',
        conf: bridgeConf(),
        containerId: 'pod1',
        netns: ns,
      });
      // The runtime gets the plugin's own result, not the squatter's forged one.
      expect(add.exitCode).toBe(0);
      expect((add.json?.ips as Array<{ address: string }>)[0]?.address).toMatch(/^10\.244\.1\.\d+\/24$/);
      expect(bin.standaloneRuns()).toBe(1);
      expect(recordFiles(h, 'attachments')).toEqual(['pod1@eth0.json']);
      // One line on stderr says why, naming the uid it found.
      const said = add.stderr.split('\n').filter((l) => l.startsWith('hcn-cni: not using the service'));
      expect(said).toEqual([
        `hcn-cni: not using the service at ${squatter.address}: its server runs as uid ${NOBODY}, ` +
          "neither root (0) nor this shim's user (0); running hcn-cni-standalone",
      ]);
      // The squatter saw a connection that carried nothing: neither the environment nor the configuration.
      await until(
        async () => (squatter.log().includes('connection') ? true : undefined),
        20_000,
        'the squatter to see the connection end',
      );
      expect(squatter.log().trim().split('\n')).toEqual(['listening', 'connection 0 bytes']);
    } finally {
      await squatter.stop();
    }
  });

  it("uses a server of the shim's own uid (a non-root shim and service, as in tests or by hand)", async () => {
    const squatter = await startSquatter(NOBODY);
    try {
      // The shim itself as nobody (a copy nobody can reach, with no standalone executable beside it): a server of
      // its own uid is its own service, so the request goes to it.
      const shim = path.join(squatDir, 'hcn-cni');
      fs.copyFileSync(bin.shim, shim);
      fs.chmodSync(shim, 0o755);
      const env = {
        PATH: process.env.PATH,
        ...cniEnv(h, { verb: 'VERSION', conf: {} }),
        HCN_CNI_SERVICE: squatter.address,
      };
      const run = spawnSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', shim], {
        env,
        input: '{"cniVersion":"1.0.0"}',
        encoding: 'utf8',
      });
      expect({ code: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({
        code: 0,
        stdout: '{"cniVersion":"1.0.0","ips":[{"address":"6.6.6.6/32"}]}\n',
        stderr: '',
      });
      expect(squatter.log()).toContain('CNI_COMMAND=VERSION');
    } finally {
      await squatter.stop();
    }
  });

  it("uses the real service (root's socket): the service serves, no refusal line, no standalone run", async () => {
    const service = await startServiceProcess(h);
    try {
      const ns = await newNamespace(h);
      const add = await viaShim(h, bin, service.address, {
        verb: 'ADD',
        conf: bridgeConf(),
        containerId: 'pod1',
        netns: ns,
      });
      expect(add.exitCode).toBe(0);
      expect(add.stderr).not.toContain('not using the service');
      expect(bin.standaloneRuns()).toBe(0);
      expect((await service.status()).served).toBe(1);
    } finally {
      await service.stop();
    }
  });
});

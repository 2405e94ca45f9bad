/**
 * The package as a consumer sees it: `import { runCni, Hcn, HcnError } from 'hcn-cni'` and `import { startSimulator }
 * from 'hcn-cni/sim'`, compiled by the repo's TypeScript in strict mode with package "exports" honoured
 * (moduleResolution node16), against the built dist/*.d.ts, then run with node. The program asks runCni for VERSION,
 * constructs an HcnError, and drives a real simulator through Hcn. A second program with a type error must NOT
 * compile: the imports are typed, not `any`.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

const ROOT = path.join(__dirname, '..', '..');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const MAIN = `import { runCni, Hcn, HcnError, type RunCniResult } from 'hcn-cni';
import { startSimulator, type RunningSimulator } from 'hcn-cni/sim';

async function main(): Promise<void> {
  const version: RunCniResult = await runCni({ env: { CNI_COMMAND: 'VERSION' }, stdin: '{"cniVersion":"1.0.0"}' });
  const e = new HcnError('HcnCreateNetwork', 0x803b0006, '{"Success":false,"Error":"The adapter was not found. ","ErrorCode":2151350278}');
  const fields: { op: string; hresult: number; code: string } = { op: e.op, hresult: e.hresult, code: e.code };
  const sim: RunningSimulator = await startSimulator({ logLevel: 'warn' });
  let networks: number;
  try {
    process.env.HCN_SIM = sim.address;
    const hcn = Hcn.open({ timeoutMs: 5000 });
    networks = (await hcn.listNetworks()).length;
  } finally {
    await sim.stop();
  }
  console.log(JSON.stringify({
    version: { exitCode: version.exitCode, stdout: version.stdout },
    hcnErrorIsConstructor: typeof HcnError === 'function',
    isError: e instanceof Error,
    isHcnError: e instanceof HcnError,
    name: e.name,
    fields,
    networks,
  }));
}
main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
`;

const BAD = `import { runCni, HcnError } from 'hcn-cni';
import { startSimulator } from 'hcn-cni/sim';
export async function bad(): Promise<void> {
  const n: number = await runCni({ env: {}, stdin: '' });
  const s: string = new HcnError('op', 1, null).hresult;
  await startSimulator({ listen: 42 });
}
`;

function tsc(project: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [TSC, '-p', project], { cwd: dir, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

let dir: string;
let compiled: { status: number | null; out: string };
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-cni-consumer-'));
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(dir, 'node_modules', 'hcn-cni'), 'dir');
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'node16',
        moduleResolution: 'node16',
        strict: true,
        noEmitOnError: false,
        skipLibCheck: false,
        types: ['node'],
        typeRoots: [path.join(ROOT, 'node_modules', '@types')],
        outDir: 'out',
      },
      files: ['main.ts', 'bad.ts'],
    }),
  );
  fs.writeFileSync(path.join(dir, 'main.ts'), MAIN);
  fs.writeFileSync(path.join(dir, 'bad.ts'), BAD);
  // One compile for both programs (tsc is the slow part): main.ts must be clean, bad.ts must fail exactly as expected.
  compiled = tsc('tsconfig.json');
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("import { runCni, Hcn, HcnError } from 'hcn-cni'", () => {
  it('package.json maps the entry points and their types to dist/ (which npm run build:ts produced)', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      main: string;
      types: string;
      exports: Record<string, { types: string; default: string }>;
    };
    expect(pkg.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    expect(pkg.exports['./sim']).toEqual({ types: './dist/sim/index.d.ts', default: './dist/sim/index.js' });
    for (const f of [
      pkg.main,
      pkg.types,
      ...Object.values(pkg.exports).flatMap((e) => (typeof e === 'string' ? [e] : [e.types, e.default])),
    ]) {
      expect(fs.existsSync(path.join(ROOT, f))).toBe(true);
    }
  });

  it('compiles strictly against the declarations and runs: VERSION from runCni, HcnError fields, Hcn against the simulator', () => {
    // No diagnostics at all outside bad.ts: not in main.ts, not in dist/*.d.ts (skipLibCheck is off).
    expect(compiled.out.split('\n').filter((l) => /error TS/.test(l) && !l.startsWith('bad.ts'))).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'out', 'main.js'))).toBe(true);
    const run = spawnSync(process.execPath, [path.join(dir, 'out', 'main.js')], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect({ status: run.status, stderr: run.status === 0 ? '' : run.stderr }).toEqual({ status: 0, stderr: '' });
    // stderr: nothing (a successful VERSION is not logged), no error.
    expect(run.stderr).toBe('');
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(out).toEqual({
      version: {
        exitCode: 0,
        stdout:
          '{"cniVersion":"1.0.0","supportedVersions":["0.1.0","0.2.0","0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]}\n',
      },
      hcnErrorIsConstructor: true,
      isError: true,
      isHcnError: true,
      name: 'HcnError',
      fields: { op: 'HcnCreateNetwork', hresult: 0x803b0006, code: 'HCN_E_ADAPTER_NOT_FOUND' },
      networks: 0,
    });
  });

  it('is typed: misuse of the imports does not compile', () => {
    const r = compiled;
    expect(r.status).not.toBe(0);
    const errors = r.out.split('\n').filter((l) => /error TS\d+/.test(l));
    expect(errors).toEqual([
      expect.stringMatching(/^bad\.ts\(4,9\): error TS2322: Type 'RunCniResult' is not assignable to type 'number'/),
      expect.stringMatching(/^bad\.ts\(5,9\): error TS2322: Type 'number' is not assignable to type 'string'/),
      expect.stringMatching(/^bad\.ts\(6,26\): error TS2322: Type 'number' is not assignable to type 'string'/),
    ]);
  });
});

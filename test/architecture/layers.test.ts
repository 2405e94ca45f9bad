/**
 * The layers of the README ("How it works"), checked on the source: nothing imports upward, only src/cli touches the process,
 * only the HCN facade loads the addon. A violation names the file and the import.
 */
import * as fs from 'fs';
import * as path from 'path';

const SRC = path.join(__dirname, '..', '..', 'src');

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Top-level area of a src file: 'cli', 'cni', …, or the file name for files directly in src/. */
function area(file: string): string {
  const rel = path.relative(SRC, file).split(path.sep);
  return rel.length === 1 ? rel[0]!.replace(/\.ts$/, '') : rel[0]!;
}

/** What each area may import (besides itself). `cni/types` and `cni/cni-error` are the CNI vocabulary. */
const ALLOWED: Record<string, string[]> = {
  cli: ['*'],
  index: ['run', 'cni', 'plugin', 'orphans', 'state', 'hns', 'log', 'net'],
  run: ['cni', 'plugin', 'state', 'hns', 'log'],
  service: ['run', 'cni', 'plugin', 'doctor', 'state', 'hns', 'log'],
  cni: ['log', 'net'],
  plugin: ['cni/types', 'cni/cni-error', 'orphans', 'state', 'hns', 'log', 'net'],
  orphans: ['state', 'hns', 'log', 'net'],
  // The node's doctor: a plan that reads (gather) and pure checks over what it read, run by src/cli and the service.
  doctor: ['plugin', 'orphans', 'state', 'hns', 'log', 'net'],
  state: ['hns/host-os', 'log'],
  hns: ['net'],
  log: [],
  net: [],
  // The node's set-up (install, uninstall): pure plans over the layers below, run by src/cli.
  install: ['cni', 'orphans', 'state', 'hns', 'log', 'net'],
  // The self-test (hcn-cni selftest, hcn-sim compare): a plan over the plugin's own parts — its claims, its naming,
  // the HCN facade — run by src/cli.
  selftest: ['cni/types', 'plugin', 'orphans', 'state', 'hns', 'log', 'net'],
  // The simulator shares two tables with the facade: HRESULTs and hcsshim's HNS feature-version ranges. It reads
  // addresses and MACs with the plugin's own library (src/net, the bottom layer, which imports nothing), so the two
  // cannot disagree on what an address is.
  sim: ['hns/hresults', 'hns/features', 'log', 'net'],
};

interface Import {
  file: string;
  target: string;
}

function imports(file: string): Import[] {
  const text = fs.readFileSync(file, 'utf8');
  const out: Import[] = [];
  const re =
    /(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|(?:import|require)\(\s*['"](\.[^'"]+)['"]\s*\)|import\s+['"](\.[^'"]+)['"]/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const spec = (m[1] ?? m[2] ?? m[3])!;
    out.push({ file, target: path.resolve(path.dirname(file), spec) });
  }
  return out;
}

function allowed(from: string, target: string): boolean {
  const a = area(from);
  const relTarget = path.relative(SRC, target).split(path.sep);
  const b = relTarget.length === 1 ? relTarget[0]! : relTarget[0]!;
  if (a === b) return true;
  const rules = ALLOWED[a] ?? [];
  if (rules.includes('*')) return true;
  const sub = relTarget.slice(0, 2).join('/').replace(/\.ts$/, '');
  return rules.includes(b) || rules.includes(sub);
}

describe('architecture', () => {
  const all = files(SRC);

  it('finds the source tree', () => {
    expect(all.length).toBeGreaterThan(30);
  });

  it('imports only downward (README "How it works")', () => {
    const bad = all
      .flatMap(imports)
      .filter((i) => !allowed(i.file, i.target))
      .map((i) => `${path.relative(SRC, i.file)} imports ${path.relative(SRC, i.target)}`);
    expect(bad).toEqual([]);
  });

  it('only src/cli touches process.env, stdin, stdout, argv and exit', () => {
    const bad = all
      .filter((f) => area(f) !== 'cli')
      .flatMap((f) => {
        const text = fs.readFileSync(f, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
        const hits = text.match(/process\.(env|stdin|stdout|argv|exit)\b/g) ?? [];
        return hits.map((h) => `${path.relative(SRC, f)}: ${h}`);
      });
    expect(bad).toEqual([]);
  });

  it('only src/hns/native.ts loads the addon', () => {
    const bad = all
      .filter((f) => path.relative(SRC, f) !== path.join('hns', 'native.ts'))
      .filter((f) => /process\.dlopen|\.node['"]/.test(fs.readFileSync(f, 'utf8')))
      .map((f) => path.relative(SRC, f));
    expect(bad).toEqual([]);
  });
});

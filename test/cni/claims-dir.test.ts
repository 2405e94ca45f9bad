/**
 * The node-wide register of live claims (src/state/claims.ts) protects an ADD of one state directory from the audit of
 * another only when both meet in the same register. Every entry point — a CNI verb, `hcn-cni serve`, the operator's
 * tool — must therefore choose it the same way: `claimsDirFor`. The service once read HCN_CNI_CLAIMS_DIR itself and
 * left the platform's default out, so on Windows its ADDs registered nowhere and its audits read nothing there.
 */
import * as fs from 'fs';
import * as path from 'path';
import { claimsDirFor, defaultClaimsDir } from '../../src/cni/defaults';

const SRC = path.join(__dirname, '..', '..', 'src');

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Code (comments removed) that reads the variable itself. */
function readers(name: string): string[] {
  return files(SRC)
    .filter((f) => {
      const code = fs
        .readFileSync(f, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/\/\/.*$/gm, '');
      return code.includes(name);
    })
    .map((f) => path.relative(SRC, f));
}

describe('the node-wide claims register', () => {
  it('is HCN_CNI_CLAIMS_DIR when set, else the platform default (C:\\ProgramData\\hcn-cni\\claims on Windows)', () => {
    expect(claimsDirFor({ HCN_CNI_CLAIMS_DIR: '/x/claims' }, 'win32')).toBe('/x/claims');
    expect(claimsDirFor({ HCN_CNI_CLAIMS_DIR: '/x/claims' }, 'linux')).toBe('/x/claims');
    expect(claimsDirFor({}, 'win32')).toBe('C:\\ProgramData\\hcn-cni\\claims');
    expect(claimsDirFor({ HCN_CNI_CLAIMS_DIR: '' }, 'win32')).toBe(defaultClaimsDir('win32'));
    expect(claimsDirFor({}, 'linux')).toBeUndefined();
  });

  it('is chosen in one place: no entry point reads HCN_CNI_CLAIMS_DIR but src/cni/defaults.ts', () => {
    expect(readers('HCN_CNI_CLAIMS_DIR')).toEqual(['cni/defaults.ts']);
  });

  it('the service and the CNI verbs both ask claimsDirFor', () => {
    for (const f of ['run.ts', 'cli/serve.ts', 'cli/operator/context.ts'])
      expect(fs.readFileSync(path.join(SRC, f), 'utf8')).toMatch(/claimsDirFor\(/);
  });
});

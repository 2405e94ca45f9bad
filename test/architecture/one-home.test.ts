/**
 * Rules with one home: the address and MAC helpers are defined once in src (src/net), and the simulator, the HCN
 * facade and the plugin all use that definition; HNS's errors are unwrapped, its objects torn down and its versions
 * compared in one place each in src/hns; so are the audit-due rule and the "does its process still run" test. A second
 * definition is named with its file.
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

const SOURCES = files(SRC).map((f) => ({ file: path.relative(SRC, f), text: fs.readFileSync(f, 'utf8') }));

/** The text without comments, so a rule named in prose does not count as a use. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
}

/** Where `function <name>` (or `const <name> =`) is defined in src. */
function homes(name: string): string[] {
  const re = new RegExp(`(?:function\\s+${name}\\b|(?:const|let)\\s+${name}\\s*=)`);
  return SOURCES.filter((s) => re.test(s.text)).map((s) => s.file);
}

describe('one home per rule', () => {
  it.each([
    ['normalizeMac', 'net/mac.ts'],
    ['unicastMac', 'net/mac.ts'],
    ['parseMac', 'net/addr.ts'],
    ['parseCidr', 'net/addr.ts'],
    ['canonicalIp', 'net/addr.ts'],
    ['parseIp', 'net/addr.ts'],
    ['formatIp', 'net/addr.ts'],
    ['defaultRoute', 'net/ipv4.ts'],
    ['familyOf', 'net/addr.ts'],
    ['ipFamily', 'net/addr.ts'],
    ['hcnCause', 'hns/hcn-error.ts'],
    ['unlessRefused', 'hns/hcn-error.ts'],
    ['detachEndpoint', 'hns/teardown.ts'],
    ['deleteObject', 'hns/teardown.ts'],
    ['deleteConfirmed', 'hns/teardown.ts'],
    ['removeEndpoint', 'hns/teardown.ts'],
    ['endpointsListed', 'hns/teardown.ts'],
    ['stillListed', 'hns/teardown.ts'],
    ['supports', 'hns/features.ts'],
    ['formatVersion', 'hns/features.ts'],
    // When an audit is due, for every asker (ADD, the node agent), and whether an intent's process still runs.
    ['auditDue', 'plugin/audit-due.ts'],
    ['processRuns', 'state/liveness.ts'],
    ['withoutBom', 'cni/json-text.ts'],
  ])('%s is defined once, in src/%s', (name, home) => {
    expect(homes(name)).toEqual([home]);
  });

  it('only src/cni/json-text.ts drops a byte-order mark (withoutBom, parseJsonText)', () => {
    const bad = SOURCES.filter(
      (s) => s.file !== path.join('cni', 'json-text.ts') && /\\uFEFF|\uFEFF/.test(code(s.text)),
    ).map((s) => s.file);
    expect(bad).toEqual([]);
  });

  it('only the HNS error module unwraps a cause (hcnCause)', () => {
    const bad = SOURCES.filter(
      (s) => s.file !== path.join('hns', 'hcn-error.ts') && /\)\.cause\b/.test(code(s.text)),
    ).map((s) => s.file);
    expect(bad).toEqual([]);
  });

  it('only src/hns/teardown.ts detaches and deletes HNS objects (detach before delete, "not found" confirmed)', () => {
    const verbs = /\.(detachNamespace|hotDetach|deleteEndpoint|deleteNetwork)\(|'not-found'/;
    const bad = SOURCES.filter(
      (s) => !s.file.startsWith('hns') && !s.file.startsWith('sim') && verbs.test(code(s.text)),
    ).map((s) => s.file);
    expect(bad).toEqual([]);
  });

  it('only src/orphans/network-holders.ts deletes a network (never while an endpoint it keeps is on it)', () => {
    // HNS takes a network's endpoints along when it is deleted: every delete of one asks the audit's rule first.
    const networkDelete = /delete(?:Object|Confirmed)\([^)]*'network'/;
    const bad = SOURCES.filter(
      (s) => s.file !== path.join('orphans', 'network-holders.ts') && networkDelete.test(code(s.text)),
    ).map((s) => s.file);
    expect(bad).toEqual([]);
  });

  it('only src/hns/features.ts compares or formats HNS versions', () => {
    // A comparison of a version field, a version literal, or a version spelt "major.minor" by hand. The simulator's
    // schema versions ({ major: 2, minor: 0 } of an HCN document) are another thing, and it spells HNS versions with
    // formatVersion too: only its version literals are exempt. An arrow (`=> v.major`) is no comparison.
    const comparison = /\.(major|minor)\s*(?:[<>]=?|[!=]==)|(?:(?<!=)[<>]=?|[!=]==)\s*[\w.?]*\.(major|minor)\b/;
    const formatted = /\.major\}\.\$\{[\w.?]*\.minor\b/;
    const literal = /\{\s*major:\s*\d+\s*,\s*minor:\s*\d+\s*\}/;
    const bad = SOURCES.filter((s) => s.file !== path.join('hns', 'features.ts')).flatMap((s) => {
      const text = code(s.text);
      const hits = [comparison, formatted, ...(s.file.startsWith('sim') ? [] : [literal])].filter((re) =>
        re.test(text),
      );
      return hits.length ? [`${s.file}: ${hits.map((re) => re.exec(text)![0]).join(', ')}`] : [];
    });
    expect(bad).toEqual([]);
  });

  it('no file but src/net parses IP addresses with node:net', () => {
    const bad = SOURCES.filter((s) => !s.file.startsWith('net') && /\bisIPv[46]\b|\bisIP\(/.test(s.text)).map(
      (s) => s.file,
    );
    expect(bad).toEqual([]);
  });
});

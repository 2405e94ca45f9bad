/**
 * Rules with one home: the address and MAC helpers are defined once in src (src/net), and the simulator, the HCN
 * facade and the plugin all use that definition; so are the audit-due rule and the "does its process still run" test. A second definition is named with its file.
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
    // When an audit is due, for every asker (ADD, the node agent), and whether an intent's process still runs.
    ['auditDue', 'plugin/audit-due.ts'],
    ['processRuns', 'state/liveness.ts'],
  ])('%s is defined once, in src/%s', (name, home) => {
    expect(homes(name)).toEqual([home]);
  });

  it('no file but src/net parses IP addresses with node:net', () => {
    const bad = SOURCES.filter((s) => !s.file.startsWith('net') && /\bisIPv[46]\b|\bisIP\(/.test(s.text)).map(
      (s) => s.file,
    );
    expect(bad).toEqual([]);
  });
});

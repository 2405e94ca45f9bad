/**
 * The README stays short and self-explanatory; docs/configuration.md documents every configuration key (with its
 * default) in a table generated from CONFIG_KEYS, docs/error-codes.md every error code the plugin can return, and
 * docs/sim-protocol.md every verb of the function list's sim column and every function with a request of its own.
 */
import * as fs from 'fs';
import * as path from 'path';
import { CniCode } from '../../src/cni/cni-error';
import { CONFIG_KEYS } from '../../src/cni/config-keys';
import { CONFIG_DOC_PATH, renderConfigTable, withConfigTable } from '../../scripts/readme-config-table';
import { HCN_FUNCTION_TABLE } from '../helpers/hcn-functions';

const ROOT = path.join(__dirname, '..', '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const CONFIGURATION = fs.readFileSync(CONFIG_DOC_PATH, 'utf8');
const ERROR_CODES = fs.readFileSync(path.join(ROOT, 'docs', 'error-codes.md'), 'utf8');
const SIM_PROTOCOL = fs.readFileSync(path.join(ROOT, 'docs', 'sim-protocol.md'), 'utf8');

describe('README', () => {
  it('shows the two quick-start commands', () => {
    expect(README).toContain('npm install && npm run demo');
    expect(README).toMatch(/^npm test\b/m);
  });

  it('is at most 10 KB (the rest belongs in docs/)', () => {
    expect(Buffer.byteLength(README, 'utf8')).toBeLessThanOrEqual(10 * 1024);
  });

  it('never says "seed", a project-internal name for the two problems (docs/glossary.md defines it)', () => {
    expect(README).not.toMatch(/\bseeds?\b/i);
  });
});

describe('docs/configuration.md', () => {
  it('has the config table generated from CONFIG_KEYS (run `npm run docs` after changing a key)', () => {
    expect(withConfigTable(CONFIGURATION)).toBe(CONFIGURATION);
  });

  it('renders a "|" inside a cell escaped and aliases as "Also:"', () => {
    const table = renderConfigTable([{ key: 'k', type: 'a | b', default: 'd', meaning: 'M.', aliases: ['x', 'y'] }]);
    expect(table.split('\n')[2]).toBe('| `k` | a \\| b | d | M. Also: x; y. |');
  });

  it.each(CONFIG_KEYS.map((k) => [k.key, k.default]))('documents the key %s with its default', (key, def) => {
    const row = CONFIGURATION.split('\n').find((l) => l.startsWith(`| \`${key}\` |`));
    expect(row).toBeDefined();
    expect(row).toContain(def.replace(/\|/g, '\\|'));
  });
});

describe('docs/error-codes.md', () => {
  it.each(Object.entries(CniCode))('documents error code %s (%i)', (_name, code) => {
    expect(ERROR_CODES).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
  });
});

describe('docs/sim-protocol.md', () => {
  // A function of a generic verb is documented by its verb's row, which points at the list: adding one changes nothing
  // here. A verb new to the list, or a function with a request of its own (OWN), needs its words on the page.
  const verbs = [...new Set(HCN_FUNCTION_TABLE.map((f) => f.sim).filter((v) => v !== 'OWN'))];
  it.each(verbs)("has a row for the verb %s of the list's sim column", (verb) => {
    expect(SIM_PROTOCOL).toMatch(new RegExp(`^\\| \`${verb}\` \\|`, 'm'));
  });

  it.each(HCN_FUNCTION_TABLE.filter((f) => f.sim === 'OWN').map((f) => f.name))('names %s (sim column OWN)', (name) => {
    expect(SIM_PROTOCOL).toMatch(new RegExp(`\\b${name}\\b`));
  });
});

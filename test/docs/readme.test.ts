/** The README documents every configuration key (with its default) and every error code the plugin can return. */
import * as fs from 'fs';
import * as path from 'path';
import { CniCode } from '../../src/cni/cni-error';
import { CONFIG_KEYS } from '../../src/cni/config-keys';
import { renderConfigTable, withConfigTable } from '../../scripts/readme-config-table';

const README = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');

describe('README', () => {
  it('shows the two quick-start commands', () => {
    expect(README).toContain('npm install && npm run demo');
    expect(README).toMatch(/^npm test\b/m);
  });

  it('has the config table generated from CONFIG_KEYS (run `npm run docs` after changing a key)', () => {
    expect(withConfigTable(README)).toBe(README);
  });

  it('renders a "|" inside a cell escaped and aliases as "Also:"', () => {
    const table = renderConfigTable([{ key: 'k', type: 'a | b', default: 'd', meaning: 'M.', aliases: ['x', 'y'] }]);
    expect(table.split('\n')[2]).toBe('| `k` | a \\| b | d | M. Also: x; y. |');
  });

  it.each(CONFIG_KEYS.map((k) => [k.key, k.default]))('documents the key %s with its default', (key, def) => {
    const row = README.split('\n').find((l) => l.startsWith(`| \`${key}\` |`));
    expect(row).toBeDefined();
    expect(row).toContain(def.replace(/\|/g, '\\|'));
  });

  it.each(Object.entries(CniCode))('documents error code %s (%i)', (_name, code) => {
    expect(README).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
  });
});

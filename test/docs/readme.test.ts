/** The README documents every configuration key (with its default) and every error code the plugin can return. */
import * as fs from 'fs';
import * as path from 'path';
import { CniCode } from '../../src/cni/errors';
import { CONFIG_KEYS } from '../../src/cni/config-keys';

const README = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');

describe('README', () => {
  it('shows the two quick-start commands', () => {
    expect(README).toContain('npm install && npm run demo');
    expect(README).toMatch(/^npm test\b/m);
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

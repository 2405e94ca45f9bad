/**
 * The configuration table of docs/configuration.md is generated from CONFIG_KEYS (src/cni/config-keys.ts), the list
 * the parser itself uses, so a key cannot be handled without being documented nor documented differently from how it
 * is handled. `npm run docs` rewrites the table between the markers; test/docs/readme.test.ts fails when the page is
 * stale. (The README lists only the handful of keys most configurations set, and links the page.)
 */
import * as fs from 'fs';
import * as path from 'path';
import { CONFIG_KEYS, type ConfigKey } from '../src/cni/config-keys';

export const CONFIG_DOC = path.join('docs', 'configuration.md');
export const CONFIG_DOC_PATH = path.join(__dirname, '..', CONFIG_DOC);
export const BEGIN = '<!-- config-table: generated from src/cni/config-keys.ts by `npm run docs`; do not edit -->';
export const END = '<!-- end of config-table -->';

/** A table cell: a literal "|" would end the cell, a newline the row. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function renderConfigTable(keys: readonly ConfigKey[] = CONFIG_KEYS): string {
  const rows = keys.map((k) => {
    const meaning = k.aliases?.length ? `${k.meaning} Also: ${k.aliases.join('; ')}.` : k.meaning;
    return `| \`${k.key}\` | ${cell(k.type)} | ${cell(k.default)} | ${cell(meaning)} |`;
  });
  return ['| key | type | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** The page with its table replaced by `table`; throws when the markers are missing or out of order. */
export function withConfigTable(page: string, table: string = renderConfigTable()): string {
  const begin = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (begin < 0 || end < begin)
    throw new Error(`${CONFIG_DOC}: the config table markers are missing (${BEGIN} … ${END})`);
  return `${page.slice(0, begin + BEGIN.length)}\n${table}\n${page.slice(end)}`;
}

if (require.main === module) {
  const before = fs.readFileSync(CONFIG_DOC_PATH, 'utf8');
  const after = withConfigTable(before);
  if (after !== before) fs.writeFileSync(CONFIG_DOC_PATH, after);
  process.stdout.write(
    `${CONFIG_DOC}: config table ${after === before ? 'already current' : 'regenerated'} (${CONFIG_KEYS.length} keys)\n`,
  );
}

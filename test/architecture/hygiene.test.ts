/** Rules the linter cannot state itself: an eslint-disable always says why (`-- reason`). */
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.join(__dirname, '..', '..');
const DIRS = ['src', 'test', 'bench', 'scripts'];

function files(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? files(p) : /\.(ts|js|mjs|cjs)$/.test(d.name) ? [p] : [];
  });
}

it('every eslint-disable comment gives its reason after " -- "', () => {
  const bare: string[] = [];
  for (const file of DIRS.flatMap((d) => files(path.join(ROOT, d)))) {
    fs.readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const m = /\/[/*]\s*eslint-disable(?:-next-line|-line)?\b(.*)$/.exec(line);
        if (m && !/\s--\s+\S/.test(m[1]!)) bare.push(`${path.relative(ROOT, file)}:${i + 1}`);
      });
  }
  expect(bare).toEqual([]);
});

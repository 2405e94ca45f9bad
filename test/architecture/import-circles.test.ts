/**
 * No import circle, type-only imports included, measured as scripts/import-circles.js measures it (TypeScript's AST,
 * Tarjan's strongly connected groups over the whole of src): a type two modules share belongs to the module that owns
 * it, and a table of operations does not import back the tables it lists. Held for the folders below; to hold it for
 * all of src, put '.' in the list.
 */
import * as path from 'path';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS script, also run by hand
const { importCircles } = require('../../scripts/import-circles.js') as {
  importCircles(dirs: string[], root?: string): { files: string[]; path: string[] }[];
};

const SRC = path.join(__dirname, '..', '..', 'src');
/** The folders (relative to src) kept free of circles. */
const HELD = ['sim', 'state', 'cni'];

const inHeld = (file: string) =>
  HELD.some((d) => d === '.' || file === d || file.startsWith(d + path.sep) || file.startsWith(d + '/'));

describe('import circles', () => {
  it('finds a circle when there is one (the measure works)', () => {
    const fixture = path.join(__dirname, '..', 'fixtures', 'import-circle');
    expect(importCircles([fixture], fixture)).toEqual([{ files: ['a.ts', 'b.ts'], path: ['a.ts', 'b.ts', 'a.ts'] }]);
  });

  it(`no import circle touches src/{${HELD.join(',')}}`, () => {
    const circles = importCircles([SRC], SRC)
      .filter((c) => c.files.some(inHeld))
      .map((c) => c.path.join(' → '));
    expect(circles).toEqual([]);
  });
});

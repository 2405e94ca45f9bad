/**
 * No import circle in src, type-only imports included, measured as scripts/import-circles.js measures it (TypeScript's
 * AST, Tarjan's strongly connected groups over the whole of src): a type two modules share belongs to the module that
 * owns it (the service's status to status.ts, a request in flight to the request book), and a table of operations does
 * not import back the tables it lists.
 */
import * as path from 'path';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS script, also run by hand
const { importCircles } = require('../../scripts/import-circles.js') as {
  importCircles(dirs: string[], root?: string): { files: string[]; path: string[] }[];
};

const SRC = path.join(__dirname, '..', '..', 'src');

describe('import circles', () => {
  it('finds a circle when there is one (the measure works)', () => {
    const fixture = path.join(__dirname, '..', 'fixtures', 'import-circle');
    expect(importCircles([fixture], fixture)).toEqual([{ files: ['a.ts', 'b.ts'], path: ['a.ts', 'b.ts', 'a.ts'] }]);
  });

  it('no import circle in src', () => {
    const circles = importCircles([SRC], SRC).map((c) => c.path.join(' → '));
    expect(circles).toEqual([]);
  });
});

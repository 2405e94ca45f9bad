/**
 * Small functions, measured as scripts/function-lengths.js measures them (TypeScript's AST, every function-like node
 * with a body): the plugin and the CNI protocol layer read as steps of at most 45 lines, the service as a composition
 * of at most 60, and nothing in src over 60. Files too: a unit a person can hold is at most 500 lines (a file past
 * that is split by what it holds, behind a small front when callers should not notice).
 */
import * as path from 'path';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS script, also run by hand
const { functionLengths, fileLengths } = require('../../scripts/function-lengths.js') as {
  functionLengths(dirs: string[]): { file: string; line: number; name: string; lines: number }[];
  fileLengths(dirs: string[]): { file: string; lines: number }[];
};

const SRC = path.join(__dirname, '..', '..', 'src');
const over = (dirs: string[], limit: number) =>
  functionLengths(dirs.map((d) => path.join(SRC, d)))
    .filter((f) => f.lines > limit)
    .map((f) => `${path.relative(SRC, f.file)}:${f.line} ${f.name} (${f.lines} lines)`);

describe('function length', () => {
  it('no function in src/plugin or src/cni is over 45 lines', () => {
    expect(over(['plugin', 'cni'], 45)).toEqual([]);
  });

  it('no function in src is over 60 lines', () => {
    expect(over(['.'], 60)).toEqual([]);
  });

  it('no file in src is over 500 lines', () => {
    const long = fileLengths([SRC])
      .filter((f) => f.lines > 500)
      .map((f) => `${path.relative(SRC, f.file)} (${f.lines} lines)`);
    expect(long).toEqual([]);
  });
});

/**
 * Which test files each entry point selects. The windows-2022 job runs `jest test/windows/integration` with
 * HCN_INTEGRATION=1: if jest.config.js ignored that directory the job would find no tests and fail.
 */
import { spawnSync } from 'child_process';
import * as path from 'path';

const ROOT = path.resolve(__dirname, '../..');

function listTests(env: Record<string, string>, ...patterns: string[]): string[] {
  const run = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), '--listTests', ...patterns], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
  });
  expect(run.status).toBe(0);
  return run.stdout
    .split('\n')
    .filter(Boolean)
    .map((f) => path.relative(ROOT, f).split(path.sep).join('/'))
    .sort();
}

test('the windows job (HCN_INTEGRATION=1) selects the integration suite and nothing of the wine suite', () => {
  expect(listTests({ HCN_INTEGRATION: '1' }, 'test/windows/integration')).toEqual([
    'test/windows/integration/hns.test.ts',
  ]);
  expect(
    listTests({ HCN_INTEGRATION: '1' }, 'test/windows').filter((f) => !f.startsWith('test/windows/integration/')),
  ).toEqual([]);
});

test('npm test leaves test/windows out; the wine suite (HCN_WINE_SUITE) has all of it', () => {
  expect(listTests({}, 'test/windows')).toEqual([]);
  expect(listTests({ HCN_WINE_SUITE: '1' }, 'test/windows')).toEqual(
    expect.arrayContaining(['test/windows/addon.test.ts', 'test/windows/integration/hns.test.ts']),
  );
});

// ts-jest transpiles only (isolatedModules); `npm test` type-checks the whole tree with tsc first.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: '<rootDir>/test/helpers/native-environment.js',
  // Rebuilds dist/ when a source is newer: tests that start the plugin as a process run the current code too.
  globalSetup: '<rootDir>/test/helpers/global-setup.js',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The wine suite (Windows build under wine, ~2 min) is `npm run test:windows`; `npm test` is the Linux suite.
  testPathIgnorePatterns: process.env.HCN_WINE_SUITE ? ['/node_modules/'] : ['/node_modules/', '/test/windows/'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  testTimeout: 60000,
  maxWorkers: 2,
};

// ts-jest transpiles only (isolatedModules); `npm test` type-checks the whole tree with tsc first.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: '<rootDir>/test/helpers/native-environment.js',
  // Rebuilds dist/ when a source is newer: tests that start the plugin as a process run the current code too.
  globalSetup: '<rootDir>/test/helpers/global-setup.js',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The wine suite (Windows build under wine, ~2 min) is `npm run test:windows`; `npm test` is the Linux suite.
  // HCN_INTEGRATION=1 (the windows-2022 job in .github/workflows/windows.yml) selects test/windows/integration, the
  // real-HNS suite, and leaves the wine suite out (it needs Linux and wine). test/package/jest-config.test.ts checks.
  testPathIgnorePatterns: [
    '/node_modules/',
    ...(process.env.HCN_WINE_SUITE
      ? []
      : process.env.HCN_INTEGRATION === '1'
        ? ['/test/windows/(?!integration/)']
        : ['/test/windows/']),
  ],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  testTimeout: 60000,
  maxWorkers: 2,
};

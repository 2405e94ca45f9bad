// ts-jest transpiles only (isolatedModules); `npm test` type-checks the whole tree with tsc first.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: '<rootDir>/test/helpers/native-environment.js',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  testTimeout: 60000,
  maxWorkers: 2,
};

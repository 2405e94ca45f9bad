// ESLint (flat config): typescript-eslint's recommended rules for the TypeScript, ESLint's for the plain JS (bench,
// scripts, test helpers); formatting is Prettier's job, so eslint-config-prettier turns every layout rule off.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'build/', 'node_modules/', 'coverage/', '.cache/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `_`-prefixed parameters and variables are unused on purpose (an interface's signature, a destructured rest).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // Plain CommonJS: bench, scripts, jest's config and environment, fixtures spawned as child processes.
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      // `const crypto = require('crypto')` is how CommonJS names a module that is also a global in Node >= 19.
      'no-redeclare': ['error', { builtinGlobals: false }],
    },
  },
  {
    files: ['test/**/*.ts'],
    languageOptions: { globals: { ...globals.jest } },
    // Tests read untyped JSON (HNS documents, CNI results, the operator tool's --json) and assert on its fields;
    // a declared type for each would only restate the assertion.
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  prettier,
);

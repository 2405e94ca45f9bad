// @ts-check
/**
 * `node -r bench/ts-register.js file.bench.ts`: lets bench/run.js run a benchmark written in TypeScript. Each .ts
 * file is transpiled to CommonJS on load with TypeScript's transpileModule (no type check; `npm run typecheck`
 * covers bench/**\/*.ts). Benchmarks should still require compiled code from ../dist, like the .js ones.
 */
'use strict';

const fs = require('fs');
const ts = require('typescript');

/** @type {NodeJS.RequireExtensions} */
const extensions = require.extensions;
extensions['.ts'] = (module, filename) => {
  const source = fs.readFileSync(filename, 'utf8');
  const out = ts.transpileModule(source, {
    fileName: filename,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      sourceMap: false,
      inlineSourceMap: true,
    },
  });
  /** @type {any} */ (module)._compile(out.outputText, filename);
};

/**
 * The packaged executable loads code only from its fixed places. HCN_CNI_ADDON and
 * HCN_CNI_HCN_LIBRARY name any shared library; a test build (dist/cli/hcn-cni.js) honours them, so the test suite
 * can point it at a build, but dist/hcn-cni must ignore them as it ignores HCN_CNI_TEST_CRASH_AT. The library here
 * proves it: its constructor writes a marker file the moment anything dlopen()s it.
 */
import { execFileSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { bridgeConf, CLI, cniEnv, startHarness, type Harness } from '../helpers/cni-harness';
import { ensureLinuxPackage, EXE, run } from './helpers';

let h: Harness;
let tmp: string;
let evil: string;

beforeAll(async () => {
  ensureLinuxPackage();
  h = await startHarness();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-trust-'));
  const src = path.join(tmp, 'evil.c');
  fs.writeFileSync(
    src,
    '#include <stdio.h>\n#include <stdlib.h>\n__attribute__((constructor)) static void loaded(void) {\n' +
      '  const char* m = getenv("HCN_TEST_MARKER"); FILE* f = m ? fopen(m, "a") : NULL; if (f) { fputs("loaded\\n", f); fclose(f); }\n}\n',
  );
  evil = path.join(tmp, 'evil.so');
  execFileSync('cc', ['-shared', '-fPIC', '-o', evil, src]);
}, 600_000);

afterAll(async () => {
  await h?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

beforeEach(async () => {
  await h.reset();
});

async function add(program: 'packaged' | 'test build', variable: string, marker: string) {
  const ns = crypto.randomUUID();
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNamespace({}, ns);
  const conf = bridgeConf();
  const env = {
    ...cniEnv(h, { verb: 'ADD', conf, netns: ns }),
    TMPDIR: tmp,
    HCN_TEST_MARKER: marker,
    [variable]: evil,
  };
  const stdin = JSON.stringify({ stateDir: h.stateDir, ...conf });
  return program === 'packaged' ? run(EXE, [], env, stdin) : run(process.execPath, [CLI], env, stdin);
}

it.each(['HCN_CNI_HCN_LIBRARY', 'HCN_CNI_ADDON'])(
  '%s: the packaged executable never loads the named library; a test build does',
  async (variable) => {
    const marker = path.join(tmp, `${variable}.packaged`);
    const packaged = await add('packaged', variable, marker);
    expect({ code: packaged.code, stdout: packaged.stdout }).toMatchObject({ code: 0 });
    expect(fs.existsSync(marker)).toBe(false);

    // The same variable does reach the loader of a test build (so the assertion above is not vacuous).
    const testMarker = path.join(tmp, `${variable}.test-build`);
    await add('test build', variable, testMarker);
    expect(fs.readFileSync(testMarker, 'utf8')).toBe('loaded\n');
  },
);

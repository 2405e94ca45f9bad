/**
 * A missing HCN library or symbol must not crash: capabilities() says what is missing and calls reject with
 * ERROR_MOD_NOT_FOUND / ERROR_PROC_NOT_FOUND. init() is once per process, so each case runs in its own child.
 */
import { spawnSync } from 'child_process';

import { addonPath, simLibraryPath } from './helpers/addon';
import { requiredIn } from '../helpers/hcn-functions';

// Runs in a child node: loads the addon, optionally registers an error class, inits, and reports as JSON.
const childScript = `
const [addonPath, libraryPath, errorClass] = process.argv.slice(1);
const hcn = require(addonPath);
const settle = (p) => p.then((value) => ({ value }), (e) => ({ name: e.name, message: e.message, op: e.op, hresult: e.hresult,
  errorRecord: e.errorRecord, own: Object.keys(e).sort(), byClass: e.constructor.name }));
(async () => {
  if (errorClass === 'throwing') hcn.setErrorClass(class Throwing extends Error { constructor() { super(); throw new Error('boom'); } });
  const out = { beforeInit: hcn.capabilities(), callBeforeInit: await settle(hcn.deleteNetwork('5f0b1190-63be-4e0c-b974-bd0f55675a42')) };
  if (libraryPath !== '-') out.caps = hcn.init({ libraryPath });
  out.enumerate = await settle(hcn.enumerateNetworks(null));
  out.create = await settle(hcn.createEndpoint('5f0b1190-63be-4e0c-b974-bd0f55675a42', null, '{}', null));
  out.hnsCall = await settle(hcn.hnsCall('GET', '/globals/version', null));
  out.adapters = await settle(hcn.listAdapters());
  out.stats = hcn.stats();
  process.stdout.write(JSON.stringify(out));
})();
`;

function runChild(libraryPath: string, errorClass = 'none'): Record<string, any> {
  const child = spawnSync(process.execPath, ['-e', childScript, addonPath, libraryPath, errorClass], {
    encoding: 'utf8',
    timeout: 20000,
  });
  expect({ status: child.status, signal: child.signal, stderr: child.stderr }).toEqual({
    status: 0,
    signal: null,
    stderr: '',
  });
  return JSON.parse(child.stdout);
}

/** Every function the addon needs (native/include/hcn_functions.h): an optional one is never missing. */
const ALL = requiredIn('HCN', 'V1', 'HCS', 'FREE');

test('a library that does not exist: capabilities say so, calls reject with ERROR_MOD_NOT_FOUND', () => {
  const out = runChild('/nonexistent/libhcnsim.so');
  expect(out.caps).toEqual({
    v2Supported: false,
    v1Supported: false,
    hcsSupported: false,
    hcnLibrary: null,
    v1Library: null,
    missing: ALL,
    optional: [],
    adapterSource: 'none',
    loadError: expect.stringContaining('/nonexistent/libhcnsim.so'),
  });
  // No error class registered: a plain Error that still carries op, hresult and errorRecord.
  expect(out.enumerate).toEqual({
    name: 'Error',
    message: 'HcnEnumerateNetworks failed with HRESULT 0x8007007E',
    op: 'HcnEnumerateNetworks',
    hresult: 0x8007007e,
    errorRecord: null,
    own: ['errorRecord', 'hresult', 'op'],
    byClass: 'Error',
  });
  // createEndpoint starts by opening its network.
  expect(out.create).toMatchObject({ op: 'HcnOpenNetwork', hresult: 0x8007007e });
  expect(out.hnsCall).toMatchObject({ op: 'HNSCall', hresult: 0x8007007e });
  expect(out.adapters).toEqual({ value: '[]' });
  expect(out.stats).toEqual({ calls: {}, frees: 0 });
});

test('a library without the HCN exports: ERROR_PROC_NOT_FOUND, named after the missing function', () => {
  // Loads fine, exports none of the ABI (and the throwing error class exercises the fallback to a plain Error).
  const out = runChild('libm.so.6', 'throwing');
  expect(out.caps).toMatchObject({
    v2Supported: false,
    v1Supported: false,
    hcnLibrary: 'libm.so.6',
    v1Library: null,
    missing: ALL,
    loadError: null,
  });
  expect(out.enumerate).toMatchObject({
    name: 'Error',
    op: 'HcnEnumerateNetworks',
    hresult: 0x8007007f,
    byClass: 'Error',
  });
  expect(out.hnsCall).toMatchObject({ op: 'HNSCall', hresult: 0x8007007f });
  expect(out.adapters).toEqual({ value: '[]' });
});

test('calls before init() reject with ERROR_MOD_NOT_FOUND and capabilities() says init is pending', () => {
  const out = runChild('-');
  expect(out.beforeInit).toMatchObject({
    v2Supported: false,
    hcnLibrary: null,
    loadError: 'init() has not been called',
    missing: ALL,
  });
  expect(out.callBeforeInit).toMatchObject({ op: 'HcnDeleteNetwork', hresult: 0x8007007e });
});

test('the real client library, for contrast, resolves everything', () => {
  const out = runChild(simLibraryPath);
  expect(out.caps).toMatchObject({ v2Supported: true, v1Supported: true, missing: [], adapterSource: 'library' });
  // HCN_SIM is unset in the child's environment: the calls reach the client and fail there, not in the addon.
  expect(out.enumerate).toMatchObject({ op: 'HcnEnumerateNetworks', hresult: 0x800706ba });
});

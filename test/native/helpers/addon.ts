/**
 * Where the native test suites find the build under test: build/Release (node-gyp) unless HCN_NATIVE_DIR points
 * elsewhere, e.g. HCN_NATIVE_DIR=build/cmake-linux/Release to test the cmake-js build.
 */
import * as path from 'path';

import type { NativeHcn } from '../../../src/hns/native-types';

export const nativeDir = path.resolve(__dirname, '../../..', process.env.HCN_NATIVE_DIR ?? 'build/Release');
export const addonPath = path.join(nativeDir, 'hcn.node');
export const simLibraryPath = path.join(nativeDir, 'libhcnsim.so');

export function loadAddon(): NativeHcn {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a .node addon loads only through require
  return require(addonPath) as NativeHcn;
}

/** The error class the tests register, standing in for src/hns's HcnError. */
export class TestHcnError extends Error {
  constructor(
    readonly op: string,
    readonly hresult: number,
    readonly errorRecord: string | null,
  ) {
    super(`${op} failed: 0x${hresult.toString(16).padStart(8, '0')}`);
    this.name = 'TestHcnError';
  }
}

/** The reason `promise` rejects with (fails the test if it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  let value: unknown;
  try {
    value = await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
}

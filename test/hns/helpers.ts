/**
 * Integration plumbing for test/hns: the REAL addon (build/Release/hcn.node) and client library (libhcnsim.so)
 * against the REAL simulator process, reached through the typed facade `Hcn`. One simulator per test file, reset
 * to a clean host before every test.
 */
import * as fs from 'fs';
import * as path from 'path';

import { Hcn } from '../../src/hns/hcn';
import { HcnError, isAdapterUnavailable, isAlreadyExists, isNotFound, isUnreachable } from '../../src/hns/hcn-error';
import { loadNative } from '../../src/hns/native';
import type { HostComputeNetwork } from '../../src/hns/schema';
import { startSimulator, type RunningSimulator, type SimControl, type StartSimulatorOptions } from '../../src/sim';
import { l2bridgeDocument } from '../sim/helpers';

export const ROOT = path.resolve(__dirname, '../..');
/** The build under test: build/Release unless HCN_NATIVE_DIR says otherwise (as in test/native). */
export const NATIVE_DIR = path.resolve(ROOT, process.env.HCN_NATIVE_DIR ?? 'build/Release');
export const ADDON_PATH = path.join(NATIVE_DIR, 'hcn.node');
export const SIM_LIBRARY_PATH = path.join(NATIVE_DIR, 'libhcnsim.so');
export const FIXTURES = path.join(__dirname, 'fixtures');

export const GUID_NULL = '00000000-0000-0000-0000-000000000000';
export { LOWER_GUID } from '../sim/helpers';
export const UPPER_GUID = /^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/;

/** The child-process fixtures load dist/; fail with a clear message rather than a confusing child error. */
export function requireDist(): void {
  const needed = ['dist/hns/native.js', 'dist/hns/hcn.js', 'dist/cli/hcn-sim.js'];
  const missing = needed.filter((f) => !fs.existsSync(path.join(ROOT, f)));
  if (missing.length > 0)
    throw new Error(`test/hns needs a compiled dist/ (missing ${missing.join(', ')}): run npm run build:ts`);
  if (!fs.existsSync(ADDON_PATH) || !fs.existsSync(SIM_LIBRARY_PATH)) {
    throw new Error(`test/hns needs ${ADDON_PATH} and ${SIM_LIBRARY_PATH}: run npm run build:native`);
  }
}

export interface HcnFixture {
  sim: RunningSimulator;
  control: SimControl;
  hcn: Hcn;
}

/**
 * Starts one simulator for the file, points the client library at it (HCN_SIM in the real process environment,
 * which getenv() in libhcnsim.so reads on every call), loads the addon once and builds the facade over it.
 */
export function useHcn(options: StartSimulatorOptions = {}): HcnFixture {
  const fx = {} as HcnFixture;
  let previous: string | undefined;
  beforeAll(async () => {
    requireDist();
    fx.sim = await startSimulator({ logLevel: 'warn', ...options });
    fx.control = fx.sim.control;
    previous = process.env.HCN_SIM;
    process.env.HCN_SIM = fx.sim.address;
    const loaded = loadNative({ addonPath: ADDON_PATH, libraryPath: SIM_LIBRARY_PATH });
    fx.hcn = new Hcn(loaded.native, loaded.capabilities, { timeoutMs: 10_000 });
  });
  afterAll(async () => {
    await fx.sim?.stop();
    if (previous === undefined) delete process.env.HCN_SIM;
    else process.env.HCN_SIM = previous;
  });
  beforeEach(async () => {
    const c = fx.control;
    await c.reset();
    const host = await c.host();
    for (const op of Object.keys(host.latencyMs)) await c.setLatency(op, 0);
    await c.setRace('delete-wins', 1);
    await c.setDeleteNetworkWithEndpoints('cascade');
    await c.setVersion(15, 4, { v2: true });
  });
  return fx;
}

/** test/sim's L2Bridge network document, typed for the facade (which adds SchemaVersion). */
export function l2bridge(
  name: string,
  prefix?: string,
  gateway?: string,
  extra: HostComputeNetwork = {},
): HostComputeNetwork {
  return l2bridgeDocument(name, prefix, gateway, extra as Record<string, unknown>) as HostComputeNetwork;
}

/** A NAT network with its own subnet: binds no adapter, so any number can exist side by side. */
export function nat(name: string, prefix: string, extra: HostComputeNetwork = {}): HostComputeNetwork {
  return { Name: name, Type: 'NAT', Ipams: [{ Type: 'Static', Subnets: [{ IpAddressPrefix: prefix }] }], ...extra };
}

/** The reason `promise` rejects with; fails the test when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<HcnError> {
  let value: unknown;
  try {
    value = await promise;
  } catch (e) {
    return e as HcnError;
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
}

/** Everything an HcnError says, as one comparable object. */
export function describeError(e: unknown): Record<string, unknown> {
  if (!(e instanceof HcnError)) return { notAnHcnError: String(e), stack: (e as Error)?.stack };
  return {
    op: e.op,
    hresult: '0x' + e.hresult.toString(16).toUpperCase(),
    code: e.code,
    errorRecord: e.errorRecord,
    message: e.message,
    isNotFound: isNotFound(e),
    isUnreachable: isUnreachable(e),
    isAlreadyExists: isAlreadyExists(e),
    isAdapterUnavailable: isAdapterUnavailable(e),
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

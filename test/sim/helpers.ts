/** Shared test plumbing: one simulator process per test file, a wire client, and assertions on HNS answers. */
import { startSimulator, WireClient, type RunningSimulator, type StartSimulatorOptions } from '../../src/sim';
import type { OpResponse } from '../../src/sim/wire-types';

export const V2 = { SchemaVersion: { Major: 2, Minor: 0 } };
/** The v2 query hcsshim sends. */
export const Q2 = JSON.stringify(V2);
export const Q1 = JSON.stringify({ SchemaVersion: { Major: 1, Minor: 0 } });

export type Json = Record<string, any>;

export function filterQuery(filter: Json, schema: 1 | 2 = 2): string {
  return JSON.stringify({ SchemaVersion: { Major: schema, Minor: 0 }, Flags: 0, Filter: JSON.stringify(filter) });
}

/** HNS's error record for an HRESULT, written out by hand: message, trailing space, unsigned decimal code. */
export function errorRecordFor(hr: number, message: string): string {
  return `{"Success":false,"Error":"${message} ","ErrorCode":${hr >>> 0}}`;
}

export function ok(r: OpResponse): string {
  if (r.hr !== 0 || r.errorRecord !== null)
    throw new Error(`expected success, got 0x${r.hr.toString(16)} ${r.errorRecord}`);
  return r.result as string;
}

export function okJson(r: OpResponse): Json {
  return JSON.parse(ok(r)) as Json;
}

/** Asserts a failed Hcn* call: the HRESULT, no result, and the exact error record. */
export function expectFailure(r: OpResponse, hr: number, message: string): void {
  expect({ hr: r.hr.toString(16), result: r.result, errorRecord: r.errorRecord }).toEqual({
    hr: (hr >>> 0).toString(16),
    result: null,
    errorRecord: errorRecordFor(hr, message),
  });
}

/** The parsed HNSCall envelope of a call that reached the service. */
export function envelope(r: OpResponse): Json {
  expect(r.hr).toBe(0);
  return JSON.parse(r.result as string) as Json;
}

export function output(r: OpResponse): any {
  const env = envelope(r);
  if (env.Success !== true) throw new Error(`HNSCall failed: ${r.result}`);
  return env.Output;
}

export function expectEnvelopeFailure(r: OpResponse, hr: number, message: string): void {
  expect(r.hr).toBe(0);
  expect(r.result).toBe(errorRecordFor(hr, message));
}

/**
 * A v2 L2Bridge network document (the request shape of microsoft/hcsshim hcn/hcnnetwork.go HostComputeNetwork),
 * without SchemaVersion (test/hns's facade adds it).
 */
export function l2bridgeDocument(name: string, prefix = '10.10.0.0/24', gateway = '10.10.0.1', extra: Json = {}): Json {
  return {
    Name: name,
    Type: 'L2Bridge',
    Ipams: [
      {
        Type: 'Static',
        Subnets: [{ IpAddressPrefix: prefix, Routes: [{ NextHop: gateway, DestinationPrefix: '0.0.0.0/0' }] }],
      },
    ],
    ...extra,
  };
}

/** The same as a wire request's settings, with its SchemaVersion. */
export function l2bridge(name: string, prefix?: string, gateway?: string, extra: Json = {}): string {
  return JSON.stringify({ ...V2, ...l2bridgeDocument(name, prefix, gateway, extra) });
}

export function natNetwork(name: string, extra: Json = {}): string {
  return JSON.stringify({ ...V2, Name: name, Type: 'NAT', ...extra });
}

export interface SimFixture {
  sim: RunningSimulator;
  c: WireClient;
}

/**
 * Starts one simulator for the file; before each test, puts it back to a clean state (objects, faults, stats and
 * the host switches the tests touch).
 */
export function useSimulator(options: StartSimulatorOptions = {}): SimFixture {
  const fx = {} as SimFixture;
  beforeAll(async () => {
    fx.sim = await startSimulator(options);
    fx.c = new WireClient(fx.sim.address);
  });
  afterAll(async () => {
    await fx.sim?.stop();
  });
  beforeEach(async () => {
    const control = fx.sim.control;
    await control.reset();
    const host = await control.host();
    for (const op of Object.keys(host.latencyMs)) await control.setLatency(op, 0);
    await control.setRace('delete-wins', 1);
    await control.setDeleteNetworkWithEndpoints('cascade');
    await control.setVersion(15, 4, { v2: true });
  });
  return fx;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const LOWER_GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const UPPER_GUID = /^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/;

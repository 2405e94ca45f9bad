/**
 * The doctor's checks as pure functions of a snapshot, for what the simulator does not make happen: an endpoint left
 * in a namespace HNS no longer has (the simulator releases it), an overlay's remote endpoint (never attached, by
 * design), the service's own troubles; and the exit status by the worst severity.
 */
import { diagnose } from '../../src/doctor/doctor';
import { exitCodeOf, type Finding } from '../../src/doctor/finding';
import type { DoctorSnapshot } from '../../src/doctor/snapshot';
import type { EndpointInfo } from '../../src/hns/api';
import type { AttachmentRecord } from '../../src/state/records';

const EP = (over: Partial<EndpointInfo> = {}): EndpointInfo => ({
  id: 'aaaaaaaa-0000-0000-0000-000000000001',
  name: 'peer-ep',
  networkId: 'net',
  ips: [],
  ...over,
});

function snapshot(over: Partial<DoctorSnapshot> = {}, endpoints: EndpointInfo[] = []): DoctorSnapshot {
  return {
    at: 1_000_000,
    graceMs: 60_000,
    host: { platform: 'win32/x64', plugin: 'test', features: [], confSource: 'test' },
    hns: { apiVersion: 2, networks: [], endpoints, endpointDocs: {}, namespaces: [{ id: 'ns-1', endpoints: [] }] },
    ...over,
  };
}

const worse = (fs: Finding[]) => fs.filter((f) => f.severity !== 'info').map((f) => [f.kind, f.severity]);

it('an endpoint in a namespace HNS no longer lists: one error', () => {
  const d = diagnose(snapshot({}, [EP({ namespaceId: 'ns-gone' })]));
  expect(worse(d)).toEqual([['endpoint-namespace-gone', 'error']]);
  expect(exitCodeOf(d)).toBe(2);
});

it("a pod of ours left in its own namespace HNS no longer has (HNS kept the reference): one gone pod, not also the endpoint's", () => {
  const ep = EP({ name: 'hcn-ep-x', namespaceId: 'ns-gone' });
  const record = {
    kind: 'attachment',
    schema: 1,
    containerId: 'pod-x',
    ifname: 'eth0',
    netns: 'ns-gone',
    mode: 'bridge',
    apiVersion: 2,
    network: { id: 'net', name: 'cbr0', owned: false },
    endpoint: { id: ep.id.toUpperCase(), name: ep.name, owned: true },
    ipamAllocated: true,
    attach: { kind: 'namespace', target: 'NS-GONE' },
    result: {},
    createdAt: 0,
  } as AttachmentRecord;
  const state = {
    stateDir: '/s',
    snapshot: { attachments: [record], intents: [], tombstones: [], quarantined: [] },
    intentLive: {},
    housekeeping: [],
  };
  expect(worse(diagnose(snapshot({ state }, [ep])))).toEqual([['pod-gone', 'warning']]);
});

it("an overlay's remote endpoint (flag 1) is never attached here, and is not a finding", () => {
  const id = EP().id;
  const s = snapshot({ unattachedSince: { [id]: 0 } }, [EP()]);
  expect(worse(diagnose(s))).toEqual([['endpoint-unattached', 'warning']]);
  s.hns!.endpointDocs[id] = { dns: { servers: [] }, flags: 1 };
  expect(diagnose(s).filter((f) => f.kind === 'endpoint-unattached')).toEqual([]);
});

it('the service: HNS seen failing is an error, abandoned calls and unserved networks warnings, the rest info', () => {
  const d = diagnose(
    snapshot({
      service: {
        running: true,
        address: '/run/x.sock',
        pid: 7,
        requests: { queued: 1, running: 2 },
        abandoned: { count: 3, bound: 64 },
        hnsFailingSince: '2026-12-06T00:00:00.000Z',
        unserved: [{ stateDir: '/s', network: 'old', attachments: 2, keptIps: 1 }],
      },
    }),
  );
  expect(d.filter((f) => f.kind === 'service').map((f) => [f.subject, f.severity])).toEqual([
    ['service', 'info'],
    ['service: HNS health', 'error'],
    ['service: abandoned HCN calls', 'warning'],
    ['service: network old', 'warning'],
  ]);
});

it('HNS that did not answer is one error; nothing else is judged from HNS', () => {
  const d = diagnose(snapshot({ hns: undefined, hnsError: 'RPC_S_CALL_FAILED_DNE\nmore' }));
  expect(worse(d)).toEqual([['hns-unreachable', 'error']]);
  expect(d.find((f) => f.kind === 'hns-unreachable')!.why).toBe('HNS could not be read: RPC_S_CALL_FAILED_DNE');
});

it('exit status: 0 with only info, 1 with a warning, 2 with an error', () => {
  const f = (severity: Finding['severity']): Finding => ({ kind: 'host', severity, subject: 's', why: 'w', next: 'n' });
  expect([[], [f('info')], [f('info'), f('warning')], [f('warning'), f('error')]].map(exitCodeOf)).toEqual([
    0, 0, 1, 2,
  ]);
});

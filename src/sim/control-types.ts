/**
 * The simulator's control interface: fault injection and inspection. `SimControl` is the TypeScript client
 * (src/sim/control-client.ts); `hcn-sim ctl --address A <command>` is the CLI for the same commands; both send
 * `{"v":1,"ctl":<command>,"args":{...}}` lines to the simulator's address (docs/sim-protocol.md).
 */

/** `HcnCreateNetwork`, `HNSCall POST /networks`, … or `*` for every operation. */
export type SimOp = string;

export type RaceMode = 'delete-wins' | 'create-wins' | 'random';

export interface SimAdapter {
  /** Interface alias as Windows shows it, e.g. "Ethernet 2". */
  Name: string;
  /** Dash-separated uppercase, e.g. "00-15-5D-AA-00-01". */
  MacAddress: string;
  InterfaceDescription?: string;
  InterfaceIndex?: number;
  /**
   * The adapter's NetCfgInstanceId ("{GUID}"), what Windows shows as Get-NetAdapter's InterfaceGuid and as
   * IP_ADAPTER_ADDRESSES AdapterName, which unlike the friendly name is permanent (MicrosoftDocs/sdk-api
   * sdk-api-src/content/iptypes/ns-iptypes-ip_adapter_addresses_lh.md). Given, or new for every adapter added: a NIC
   * replaced, or its driver reinstalled, comes back with another one while it may keep its name and MAC
   * (projectcalico/calico issue 11840, Hyper-V synthetic NICs after a reboot).
   */
  InterfaceGuid?: string;
  /**
   * Backed by hardware (default true for host adapters; the host vNICs HNS adds are false). A field of the simulator's
   * adapter listing, not of an HNS document: the split Get-NetAdapter -Physical makes on Windows.
   */
  Physical?: boolean;
}

/** The simulated host: what `--host FILE` contains and what `host` returns. */
export interface SimHost {
  adapters: SimAdapter[];
  /** HNS version reported by GET /globals/version. Default 15.4 (Windows Server 2022 era). */
  version: { major: number; minor: number };
  /** Whether the HCN (v2) functions work. When false they fail with E_NOTIMPL (0x80004001). Default true. */
  v2: boolean;
  /** Deleting a network that still has endpoints: cascade (default) or refuse with 0x803B002C. */
  deleteNetworkWithEndpoints: 'cascade' | 'refuse';
  /** Outcome of a delete that arrives while a create of the same id is queued or running. Default delete-wins. */
  race: RaceMode;
  /** Seed for `race: random`. */
  seed: number;
  /**
   * Whether failed HNSCall envelopes carry ErrorCode (default true, as MicrosoftDocs/Virtualization-Documentation
   * virtualization/api/hcn/HNS_Schema.md "Response" has it). false: {Success, Error} only, the shape hcsshim's
   * hnsResponse reads (microsoft/hcsshim internal/hns/hnsnetwork.go), so clients must recognise failures by text.
   */
  v1ErrorCodes?: boolean;
  /** Per-operation latency in ms; key `*` is the default. Default all 0. */
  latencyMs: Record<SimOp, number>;
  /**
   * A test mode, not HNS behaviour: every GUID in every answer (views, enumerations, HNSCall envelopes, HCS
   * documents) re-cased, `upper` or `mixed` (alternating letter case, flipped on every answer), so that a client comparing ids
   * case-sensitively fails. HNS itself mixes cases (lowercase HCN ids, uppercase v1 ids, SwitchGuid and namespace
   * resources), which is why clients must not care. Default `as-stored`.
   */
  idCase?: IdCase;
}

export type IdCase = 'as-stored' | 'upper' | 'mixed';

export interface SimObjectCounts {
  networks: number;
  endpoints: number;
  namespaces: number;
}

export interface SimCallRecord {
  seq: number;
  op: SimOp;
  /** `v1` for HNSCall, `v2` for Hcn*, `hcs` for Hcs* (compute systems), `sim` for simulator-only exports. */
  api: 'v1' | 'v2' | 'hcs' | 'sim';
  pid: number;
  /** Object id the call named or created, when there is one. */
  id?: string;
  hr: number;
  acceptedAt: number;
  finishedAt: number;
  /**
   * Set when the call was disturbed, comma-joined when several apply: 'failed', 'hung', 'killed-client',
   * 'kill-refused', 'race-delete-wins', 'race-create-wins', 'restart' (in flight at a restart), 'reset', 'down'
   * (arrived while restarting), 'v2-disabled', 'stale-handle' (a call on a handle of an earlier service instance: stale-handles.ts), 'bad-request'.
   */
  fault?: string;
}

export interface SimStats {
  /** Calls accepted, by operation name. */
  calls: Record<SimOp, number>;
  /**
   * Milliseconds during which the service was executing at least one operation (the union of execution
   * intervals, latency included): the denominator of the makespan ratio in the benchmarks.
   */
  busyMs: number;
  /** Mutations queued or executing right now. */
  pendingMutations: number;
  /**
   * The operations of the calls hung right now (control hang). A test waits on this, not on pendingMutations, to know
   * the call it hung has started: a mutation merely executing before it also counts as pending.
   */
  hung: SimOp[];
  counts: SimObjectCounts;
  /** Times the service was restarted (ctl restart) since it started. */
  restarts: number;
}

/** Everything the service holds, for tests and `hcn-sim ctl dump`. Objects are in their v2 shape plus extras. */
export interface SimDump {
  host: SimHost;
  networks: Array<Record<string, unknown> & { ID: string; Name: string; CreatedBy: 'v1' | 'v2' }>;
  endpoints: Array<Record<string, unknown> & { ID: string; Name: string; CreatedBy: 'v1' | 'v2' }>;
  namespaces: Array<Record<string, unknown> & { ID: string; CreatedBy: 'v1' | 'v2' }>;
  /** Adapter name → id of the network that binds it. */
  boundAdapters: Record<string, string>;
  /** HCS compute systems (containers, `ctl container add`) with the endpoints hot-added to them. */
  computeSystems: Array<{ ID: string; Endpoints: string[] }>;
  stats: SimStats;
}

export interface FaultOptions {
  /** Which matching call the fault hits: 1 = the next one (default). */
  nth?: number;
  /** How many consecutive matching calls it hits, starting at nth (default 1). */
  count?: number;
  /**
   * failCall only: the call takes effect first and is then answered with the failure — what a client sees when HNS
   * committed and the answer it got says otherwise (a v1 envelope of {Success: false} with no code is all hcsshim's
   * hnsResponse reads: microsoft/hcsshim internal/hns/hnsnetwork.go), so it cannot tell it from a refusal.
   */
  afterCommit?: boolean;
}

export interface SimControl {
  readonly address: string;
  ping(): Promise<{ pid: number; version: string }>;
  /** Latency of an operation (or `*` for the default), applied to every later call. */
  setLatency(op: SimOp, ms: number): Promise<void>;
  /** The nth matching call fails with this HRESULT (and the matching error record) without any effect. */
  failCall(op: SimOp, hresult: number, options?: FaultOptions): Promise<void>;
  /**
   * The nth matching call hangs when it starts executing: for `ms` milliseconds, or until release(). A hung
   * mutation holds the mutation queue, as a hung HNS does; reads are still served. It then completes normally.
   */
  hang(op: SimOp, options?: FaultOptions & { ms?: number }): Promise<void>;
  /** Lets every hung call (of `op`, or all) continue. */
  release(op?: SimOp): Promise<void>;
  /**
   * When the nth matching call arrives, the service accepts it (so it will complete and commit) and then
   * SIGKILLs the calling client process (the pid the client library sent).
   */
  killClient(op: SimOp, options?: FaultOptions): Promise<void>;
  /** Outcome of a delete that races an in-flight create of the same id. */
  setRace(mode: RaceMode, seed?: number): Promise<void>;
  setDeleteNetworkWithEndpoints(mode: 'cascade' | 'refuse'): Promise<void>;
  /**
   * Simulates an HNS restart: in-flight calls fail with RPC_S_CALL_FAILED_DNE (0x800706BF), calls during the
   * next `downMs` fail the same way, then non-persistent networks (flag 8) and all endpoints are gone; namespaces
   * stay unless `dropNamespaces` (true: all; or the listed ids) — no public source says which (src/sim/store.ts).
   */
  restart(options?: { downMs?: number; dropNamespaces?: boolean | string[]; rehydrate?: boolean }): Promise<void>;
  /** A test fault: the endpoint's HNS state (v1 State: 5 Degraded, 6 Destroyed). */
  setEndpointState(id: string, state: number): Promise<void>;
  setVersion(major: number, minor: number, options?: { v2?: boolean }): Promise<void>;
  addAdapter(adapter: SimAdapter): Promise<void>;
  removeAdapter(name: string): Promise<void>;
  /** Starts an HCS compute system (a container) that endpoints can be hot-attached to. */
  addContainer(id: string): Promise<void>;
  /** Removes it, as a runtime does when the container is gone; endpoints attached to it stay as they are. */
  removeContainer(id: string): Promise<void>;
  /** Puts an endpoint in one of HNS's own lifecycle states (5 Degraded, 6 Destroyed: src/sim/endpoint-state.ts). */
  setEndpointState(id: string, state: number): Promise<void>;
  host(): Promise<SimHost>;
  dump(): Promise<SimDump>;
  stats(): Promise<SimStats>;
  /** The call log (most recent last, at most the last 10 000 calls). */
  calls(): Promise<SimCallRecord[]>;
  /**
   * Clears faults; with `objects: true` (default) also every object, stats and the call log, and calls still in
   * flight fail with RPC_S_CALL_FAILED_DNE (nothing commits into the clean state). Keeps the host.
   */
  reset(options?: { objects?: boolean }): Promise<void>;
  /** Resolves when no mutation is queued or executing (and none hung), e.g. to wait for a create to commit. */
  waitIdle(timeoutMs?: number): Promise<void>;
  /** Stops the service process. */
  shutdown(): Promise<void>;
}

/**
 * The control commands on the wire: `{"v":1,"ctl":<name>,"args":<args>}` → `{"ok":true,"result":<result>}` or
 * `{"ok":false,"error":"…"}`. One entry per SimControl method; `hcn-sim ctl` uses the same names.
 */
export interface SimControlCommands {
  ping: { args: Record<string, never>; result: { pid: number; version: string } };
  latency: { args: { op: SimOp; ms: number }; result: void };
  /** hresult: a number, or a string "0x803B0006" / "2151350278" / "HCN_E_ADAPTER_NOT_FOUND". */
  fail: { args: { op: SimOp; hresult: number | string } & FaultOptions; result: void };
  hang: { args: { op: SimOp; ms?: number } & FaultOptions; result: void };
  /** result.released: calls let go (hung now, or selected to hang and not started yet). */
  release: { args: { op?: SimOp }; result: { released: number } };
  'kill-client': { args: { op: SimOp } & FaultOptions; result: void };
  race: { args: { mode: RaceMode; seed?: number }; result: void };
  'delete-with-endpoints': { args: { mode: 'cascade' | 'refuse' }; result: void };
  /** result.downUntil: epoch ms until which calls fail with 0x800706BF. */
  /** rehydrate: the endpoints stay, without their policies (store.ts rehydrate). */
  restart: {
    args: { downMs?: number; dropNamespaces?: boolean | string[]; rehydrate?: boolean };
    result: { downUntil: number };
  };
  'endpoint-state': { args: { id: string; state: number }; result: void };
  version: { args: { major: number; minor: number; v2?: boolean }; result: void };
  'adapter-add': { args: { adapter: SimAdapter }; result: SimAdapter };
  'adapter-rm': { args: { name: string }; result: void };
  'container-add': { args: { id: string }; result: void };
  'container-rm': { args: { id: string }; result: void };
  host: { args: Record<string, never>; result: SimHost };
  dump: { args: Record<string, never>; result: SimDump };
  stats: { args: Record<string, never>; result: SimStats };
  calls: { args: Record<string, never>; result: SimCallRecord[] };
  reset: { args: { objects?: boolean }; result: void };
  'wait-idle': { args: { timeoutMs?: number }; result: void };
  shutdown: { args: Record<string, never>; result: void };
}

/**
 * The surface of the native addon (build/Release/hcn.node), exactly as native/addon exports it.
 *
 * Rules of the seam:
 * - Strings and ids cross, handles never do: each call opens, acts, queries and closes inside one native call —
 *   except the handles a caller asks to hold (open*Handle), which cross as numbers the addon keeps the handle under,
 *   until closeHandle (src/hns/held-handles.ts).
 * - Every HCN call runs on a thread of the addon's own (never libuv's pool: a call HNS never answers holds its thread,
 *   and nothing that later calls need) and returns a Promise; N-API is only touched on the main thread.
 * - JSON goes in and comes out as strings; parsing and typing is the TypeScript facade's job (src/hns).
 * - An HCN failure rejects with an instance of the class given to setErrorClass (HcnError), constructed as
 *   `new Cls(op, hresult, errorRecord)` where hresult is unsigned and errorRecord the raw JSON text or null.
 *   A non-empty error record with S_OK is a failure too (hcsshim's rule): the native side then passes hresult 0
 *   with the record, and HcnError takes the record's ErrorCode (or E_FAIL when it has none).
 * - A missing library or symbol is not a crash: capabilities() says so, and calls that need it reject with
 *   ERROR_MOD_NOT_FOUND (0x8007007E) or ERROR_PROC_NOT_FOUND (0x8007007F).
 * - GUID arguments are 36-character strings (braces optional, any case); null or '' means GUID_NULL.
 */

export interface NativeCapabilities {
  /** All HCN (computenetwork) functions the project uses were resolved. */
  readonly v2Supported: boolean;
  /** HNSCall (vmcompute) was resolved. */
  readonly v1Supported: boolean;
  /** HcsOpenComputeSystem, HcsModifyComputeSystem and HcsCloseComputeSystem (vmcompute) were resolved: hot attach. */
  readonly hcsSupported: boolean;
  /** Path or name of the library HCN functions came from, or null when none could be loaded. */
  readonly hcnLibrary: string | null;
  /** Path or name of the library HNSCall came from, or null. */
  readonly v1Library: string | null;
  /** Function names that could not be resolved (empty when everything is there). */
  readonly missing: readonly string[];
  /**
   * The optional functions the host has (need OPTIONAL in native/include/hcn_functions.h): each a capability of its
   * own, whose absence is not missing.
   */
  readonly optional: readonly string[];
  /** Where listAdapters() gets its answer: the HCN library (simulator), the OS, or nowhere. */
  readonly adapterSource: 'library' | 'os' | 'none';
  /** The reason a library failed to load (dlerror / GetLastError text), if it did. */
  readonly loadError: string | null;
}

export interface NativeInitOptions {
  /**
   * Linux/macOS: the simulator client library to dlopen (required there).
   * Windows: ignored; computenetwork.dll and vmcompute.dll are always loaded from System32.
   */
  readonly libraryPath?: string;
}

/** Counters of native calls, by resolved function name, for coverage reports (the wine suite prints them). */
export interface NativeStats {
  readonly calls: Readonly<Record<string, number>>;
  /** Calls to the free function (CoTaskMemFree) for strings returned by the library. */
  readonly frees: number;
}

/** The addon's call threads (native/addon/call_threads.h): every HCN call runs on one, outside libuv's pool. */
export interface NativeCallThreads {
  /** Call threads alive in the process, busy or idle (an idle one ends after a while). */
  readonly threads: number;
  /** Of those, running a call (perhaps one HNS never answers). */
  readonly busy: number;
  /** Threads started since the process began. */
  readonly started: number;
  /** Calls of this JS environment started and not yet settled. */
  readonly pending: number;
}

/** The HCN object families; a function's name says which one it acts on (native/include/hcn_family.h). */
export type HcnFamily = 'Network' | 'Endpoint' | 'Namespace';
/**
 * The names the calls by name take: a function of native/include/hcn_functions.h whose sim column is that verb. The
 * list is the truth (a name it lacks, or of another verb, rejects with a TypeError); these types only hold a name to
 * the shape such a function has: Hcn<Verb><Family>….
 */
export type QueryFunction = `HcnQuery${HcnFamily}${string}`;
export type ModifyFunction = `HcnModify${HcnFamily}${string}`;
export type EnumerateFunction = `HcnEnumerate${HcnFamily}${string}`;
export type DeleteFunction = `HcnDelete${HcnFamily}${string}`;

export type HcnErrorConstructor = new (op: string, hresult: number, errorRecord: string | null) => Error;

export interface NativeHcn {
  /** Loads the HCN libraries; idempotent (the second call returns the first call's capabilities). */
  init(options: NativeInitOptions): NativeCapabilities;
  capabilities(): NativeCapabilities;
  setErrorClass(ctor: HcnErrorConstructor): void;
  stats(): NativeStats;
  callThreads(): NativeCallThreads;

  // Networks. query: a HostComputeQuery JSON string, or null (the v1 shape).
  enumerateNetworks(query: string | null): Promise<string>;
  /** HcnCreateNetwork → HcnQueryNetworkProperties(query) → HcnCloseNetwork; resolves to the properties JSON. */
  createNetwork(id: string | null, settings: string, query: string | null): Promise<string>;
  /** HcnOpenNetwork → HcnQueryNetworkProperties → HcnCloseNetwork. */
  getNetworkProperties(id: string, query: string | null): Promise<string>;
  /** HcnOpenNetwork → HcnModifyNetwork → HcnCloseNetwork. */
  modifyNetwork(id: string, settings: string): Promise<void>;
  deleteNetwork(id: string): Promise<void>;
  /** Enumerate, then open/query/close each; objects that vanish meanwhile are skipped. Resolves to a JSON array. */
  listNetworksDetailed(query: string | null): Promise<string>;

  // Endpoints.
  enumerateEndpoints(query: string | null): Promise<string>;
  /** HcnOpenNetwork → HcnCreateEndpoint → HcnQueryEndpointProperties → close both. */
  createEndpoint(networkId: string, id: string | null, settings: string, query: string | null): Promise<string>;
  getEndpointProperties(id: string, query: string | null): Promise<string>;
  modifyEndpoint(id: string, settings: string): Promise<void>;
  deleteEndpoint(id: string): Promise<void>;
  listEndpointsDetailed(query: string | null): Promise<string>;

  // Namespaces.
  enumerateNamespaces(query: string | null): Promise<string>;
  createNamespace(id: string | null, settings: string, query: string | null): Promise<string>;
  getNamespaceProperties(id: string, query: string | null): Promise<string>;
  modifyNamespace(id: string, settings: string): Promise<void>;
  deleteNamespace(id: string): Promise<void>;
  listNamespacesDetailed(query: string | null): Promise<string>;

  // Calls by name: any function of the list whose sim column is the verb, its family's open and close around it
  // (native/addon/hcn_calls.h QueryObject and its siblings). A new function of such a shape needs nothing here.
  /** HcnOpen<Family>(id) → fn(query) → HcnClose<Family>; resolves to fn's answer (JSON text). */
  callQuery(fn: QueryFunction, id: string, query: string | null): Promise<string>;
  /** HcnOpen<Family>(id) → fn(settings) → HcnClose<Family>. */
  callModify(fn: ModifyFunction, id: string, settings: string): Promise<void>;
  /** fn(query): the JSON array of ids. */
  callEnumerate(fn: EnumerateFunction, query: string | null): Promise<string>;
  /** fn(id). */
  callDelete(fn: DeleteFunction, id: string): Promise<void>;

  // Held handles: opened once, used by many calls, closed by closeHandle (a call still using one keeps it open until
  // it ends). A number that names no held handle (closed already) rejects with E_HANDLE.
  /** HcnOpenNetwork, the handle kept: resolves to its number. */
  openNetworkHandle(id: string): Promise<string>;
  /** HcnOpenNamespace, the handle kept. */
  openNamespaceHandle(id: string): Promise<string>;
  /** HcnCreateEndpoint on a held network handle → HcnQueryEndpointProperties → HcnCloseEndpoint. */
  createEndpointIn(networkHandle: string, id: string | null, settings: string, query: string | null): Promise<string>;
  /** HcnModify<Kind> on a held handle. */
  modifyHeld(handle: string, settings: string): Promise<void>;
  /** Forgets the handle; HcnClose<Kind> once no call uses it. An unknown number is already closed. */
  closeHandle(handle: string): void;

  /** HNS v1: HNSCall(method, path, body) → the raw response envelope JSON {Success, Error, ErrorCode, Output}. */
  hnsCall(method: string, path: string, body: string | null): Promise<string>;

  /** JSON array of {Name, MacAddress, InterfaceDescription, InterfaceIndex, Physical, InterfaceGuid}. */
  listAdapters(): Promise<string>;

  /**
   * HCS: HcsOpenComputeSystem(id) → HcsModifyComputeSystem(request) → HcsCloseComputeSystem (vmcompute.dll), the
   * sequence of hcsshim's modifyContainer (hnsendpoint.go). A failure names the function (a compute system that
   * does not exist: HcsOpenComputeSystem, 0xC037010E) and carries HCS's result document as the error record.
   */
  modifyComputeSystem(id: string, request: string): Promise<void>;
  /**
   * HCS: HcsOpenComputeSystem(id) → HcsCloseComputeSystem, read-only: resolves when HCS has the compute system; a
   * container that no longer exists fails the open (HcsOpenComputeSystem, 0xC037010E), as hcsshim's
   * OpenComputeSystem does (internal/hcs/system.go).
   */
  openComputeSystem(id: string): Promise<void>;
  /**
   * HcnRegisterServiceCallback, an optional function (capabilities().optional): `onNotification` is called on the JS
   * thread for each of HNS's service notifications (type: HCN_NOTIFICATIONS, status: unsigned HRESULT) until
   * unregisterServiceCallback settles. Resolves with the registration's id.
   */
  registerServiceCallback(onNotification: (type: number, status: number, data: string | null) => void): Promise<string>;
  /** HcnUnregisterServiceCallback; an unknown id is already unregistered. */
  unregisterServiceCallback(id: string): Promise<void>;

  /**
   * OS file lock that the kernel releases when the process dies (fcntl OFD lock / LockFileEx), non-blocking:
   * returns a handle, or null when another holder has it. Creates the file (0600) if needed.
   */
  tryLockFile(path: string): number | null;
  unlockFile(handle: number): void;

  /**
   * An opaque, stable token for "process pid as started at time T" (Linux: /proc/<pid>/stat start time in clock
   * ticks; Windows: GetProcessTimes creation time), or null when no such process exists. Comparing tokens detects
   * PID reuse.
   */
  processStartTime(pid: number): string | null;

  /**
   * Ends the process now (_exit / TerminateProcess). process.exit() would run exit handlers and static destructors
   * under a call thread still inside an HCN call HNS never answers; the CNI executable must not outlive its timeout.
   * Output must already be written.
   */
  exitNow(code: number): never;

  /**
   * Who connected to an accepted unix socket (Linux SO_PEERCRED); throws elsewhere. The service refuses a peer
   * that is not its own user before it reads the request.
   */
  peerCredentials(fd: number): { pid: number; uid: number; gid: number };

  /**
   * Windows: the service's named-pipe server (native/addon/pipe_server_win.cc); throws elsewhere. Creates `name`
   * with a protected DACL granting only SYSTEM and BUILTIN\Administrators, as the first instance (fails if the pipe
   * exists), rejecting remote clients; then, on a native thread, checks each client's token against `allowedSids`
   * before anything is read, and either refuses it (disconnects) or hands it over as a C runtime fd of node's own
   * libuv (uv_open_osfhandle), for `new net.Socket({ fd })`. Events arrive on the JS thread.
   */
  listenPipe(
    name: string,
    allowedSids: readonly string[],
    onEvent: (event: PipeServerEvent) => void,
    /**
     * joinPid: a hand-over — the pipe exists and the service with this pid, serving it, agreed to hand it over; the
     * server checks it is the pipe's server (GetNamedPipeServerProcessId) and adds its instances beside that one's.
     */
    options?: { joinPid?: number },
  ): NativePipeServer;
}

export type PipeServerEvent =
  | { type: 'connection'; fd: number; pid: number | null; user: string | null }
  /** A client whose token holds none of the allowed SIDs (or whose token could not be read): nothing was read. */
  | { type: 'refused'; reason: string; pid: number | null; user: string | null }
  | { type: 'error'; message: string };

export interface NativePipeServer {
  /** The pipe's DACL as the system reports it back (SDDL), or null if it could not be read. */
  readonly dacl: string | null;
  /**
   * Stops accepting; connections already handed over stay open. `handedOver`: instances a client has already
   * connected to are handed over (as connections) rather than closed.
   */
  close(handedOver?: boolean): void;
}

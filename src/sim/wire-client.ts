/**
 * A TypeScript client of the op protocol: the same request lines the C++ client library (native/simclient) sends,
 * one connection per call (it does not keep connections as the C++ client does). For tests, benchmarks and scripts that drive the simulator without the addon. Transport
 * failures become the HRESULTs the C++ client reports: RPC_S_SERVER_UNAVAILABLE when no connection could be made,
 * RPC_S_CALL_FAILED when it broke before a full response line (docs/sim-protocol.md).
 */
import { HR } from '../hns/hresults';
import { GUID_NULL } from './guid';
import { LineError, requestLine } from './line-client';
import { errorRecordObject } from './sim-error';
import type { OpRequest, OpResponse } from './wire-types';

export type { OpRequest, OpResponse };

export interface WireClientOptions {
  /** The pid sent with each request (the process a kill-client fault kills). Default: this process. */
  pid?: number;
}

function transportFailure(hr: number, why: string): OpResponse {
  return {
    hr,
    result: null,
    errorRecord: JSON.stringify({ ...errorRecordObject(hr), Error: `${errorRecordObject(hr).Error}(${why}) ` }),
  };
}

export class WireClient {
  private readonly pid: number;

  constructor(
    readonly address: string,
    options: WireClientOptions = {},
  ) {
    this.pid = options.pid ?? process.pid;
  }

  /** Sends one op request as is (fields per docs/sim-protocol.md). */
  async call(req: Omit<OpRequest, 'v' | 'pid'> & { pid?: number }): Promise<OpResponse> {
    const line: OpRequest = { v: 1, pid: this.pid, winpid: 0, ...req };
    try {
      const res = (await requestLine(this.address, line)) as Partial<OpResponse>;
      if (typeof res.hr !== 'number') return transportFailure(HR.RPC_S_CALL_FAILED, 'malformed response');
      return { hr: res.hr >>> 0, result: res.result ?? null, errorRecord: res.errorRecord ?? null };
    } catch (e) {
      if (e instanceof LineError) {
        return transportFailure(e.stage === 'connect' ? HR.RPC_S_SERVER_UNAVAILABLE : HR.RPC_S_CALL_FAILED, e.message);
      }
      throw e;
    }
  }

  enumerateNetworks(query: string | null = null) {
    return this.call({ op: 'HcnEnumerateNetworks', query });
  }
  createNetwork(id: string | null, settings: string | null) {
    return this.call({ op: 'HcnCreateNetwork', id: id ?? GUID_NULL, settings });
  }
  openNetwork(id: string) {
    return this.call({ op: 'HcnOpenNetwork', id });
  }
  queryNetworkProperties(id: string, query: string | null = null) {
    return this.call({ op: 'HcnQueryNetworkProperties', id, query });
  }
  modifyNetwork(id: string, settings: string) {
    return this.call({ op: 'HcnModifyNetwork', id, settings });
  }
  deleteNetwork(id: string) {
    return this.call({ op: 'HcnDeleteNetwork', id });
  }

  enumerateEndpoints(query: string | null = null) {
    return this.call({ op: 'HcnEnumerateEndpoints', query });
  }
  createEndpoint(network: string, id: string | null, settings: string | null) {
    return this.call({ op: 'HcnCreateEndpoint', network, id: id ?? GUID_NULL, settings });
  }
  openEndpoint(id: string) {
    return this.call({ op: 'HcnOpenEndpoint', id });
  }
  queryEndpointProperties(id: string, query: string | null = null) {
    return this.call({ op: 'HcnQueryEndpointProperties', id, query });
  }
  modifyEndpoint(id: string, settings: string) {
    return this.call({ op: 'HcnModifyEndpoint', id, settings });
  }
  deleteEndpoint(id: string) {
    return this.call({ op: 'HcnDeleteEndpoint', id });
  }

  enumerateNamespaces(query: string | null = null) {
    return this.call({ op: 'HcnEnumerateNamespaces', query });
  }
  createNamespace(id: string | null, settings: string | null) {
    return this.call({ op: 'HcnCreateNamespace', id: id ?? GUID_NULL, settings });
  }
  openNamespace(id: string) {
    return this.call({ op: 'HcnOpenNamespace', id });
  }
  queryNamespaceProperties(id: string, query: string | null = null) {
    return this.call({ op: 'HcnQueryNamespaceProperties', id, query });
  }
  modifyNamespace(id: string, settings: string) {
    return this.call({ op: 'HcnModifyNamespace', id, settings });
  }
  deleteNamespace(id: string) {
    return this.call({ op: 'HcnDeleteNamespace', id });
  }

  /** HNSCall: `result` is the v1 envelope text ({Success, Error, ErrorCode, Output}). */
  hnsCall(method: string, path: string, request: string | null = null) {
    return this.call({ op: 'HNSCall', method, path, request });
  }

  enumerateAdapters() {
    return this.call({ op: 'HcnSimEnumerateAdapters' });
  }
}

/**
 * What both APIs do the same way (HostOps): hot attach to a Docker-style container through HCS (HCN has no container
 * attach), asking v1 first whether it is attached, as hcsshim does; v1-only reads; the host's adapters and HNS's
 * version. The base of V2Api and V1Api.
 */
import type { HostOps, HotAttachOutcome } from './api-types';
import { orUndefined, sameId } from './answers';
import type { HnsVersion } from './features';
import type { Hcn, HostAdapter } from './hcn';
import { isComputeSystemMissing } from './hcn-error';
import type { HnsV1Endpoint } from './schema';

export abstract class HostOpsBase implements HostOps {
  constructor(readonly hcn: Hcn) {}

  hotAttachUnavailable(): string | undefined {
    const caps = this.hcn.capabilities;
    const missing = [
      ...(caps.hcsSupported ? [] : ['HcsOpenComputeSystem/HcsModifyComputeSystem/HcsCloseComputeSystem']),
      ...(caps.v1Supported ? [] : ['HNSCall']),
    ];
    return missing.length ? `${missing.join(' and ')} (vmcompute.dll)` : undefined;
  }

  async endpointContainers(endpointId: string): Promise<string[] | undefined> {
    const e = await orUndefined(this.hcn.hnsCall<HnsV1Endpoint>('GET', `/endpoints/${endpointId}`));
    return e ? (e.SharedContainers ?? []).map(String) : undefined;
  }

  private async isAttachedTo(endpointId: string, containerId: string): Promise<boolean | undefined> {
    // hcsshim IsAttached: a case-insensitive containment test on SharedContainers.
    const containers = await this.endpointContainers(endpointId);
    return containers && containers.some((c) => c.toLowerCase().includes(containerId.toLowerCase()));
  }

  private async modifyContainer(
    endpointId: string,
    containerId: string,
    request: 'Add' | 'Remove',
  ): Promise<HotAttachOutcome> {
    try {
      await this.hcn.modifyComputeSystem(containerId, {
        ResourceType: 'Network',
        RequestType: request,
        Settings: endpointId,
      });
      return 'done';
    } catch (e) {
      if (request === 'Remove' && isComputeSystemMissing(e)) return 'container-gone';
      throw e;
    }
  }

  async hotAttach(endpointId: string, containerId: string): Promise<HotAttachOutcome> {
    const attached = await this.isAttachedTo(endpointId, containerId);
    if (attached === undefined) return 'endpoint-gone';
    if (attached) return 'already';
    return this.modifyContainer(endpointId, containerId, 'Add');
  }

  async hotDetach(endpointId: string, containerId: string): Promise<HotAttachOutcome> {
    const attached = await this.isAttachedTo(endpointId, containerId);
    if (attached === undefined) return 'endpoint-gone';
    if (!attached) return 'already';
    return this.modifyContainer(endpointId, containerId, 'Remove');
  }

  async computeSystemExists(containerId: string): Promise<boolean | undefined> {
    if (!this.hcn.capabilities.hcsSupported) return undefined;
    try {
      await this.hcn.openComputeSystem(containerId);
      return true;
    } catch (e) {
      if (isComputeSystemMissing(e)) return false;
      throw e;
    }
  }

  async namespaceHasEndpoint(namespaceId: string, endpointId: string): Promise<boolean> {
    if (!this.hcn.capabilities.v2Supported) return false;
    const ns = await orUndefined(this.hcn.getNamespace(namespaceId));
    return (ns?.Resources ?? []).some((r) => r.Type === 'Endpoint' && sameId(r.Data?.Id, endpointId));
  }

  abstract endpointIds(): Promise<string[]>;

  listAdapters(): Promise<HostAdapter[]> {
    return this.hcn.listAdapters();
  }

  /** What this API has learnt of the host, shared with every view made by withHcn. */
  private readonly learnt: { versionAnswer?: Promise<HnsVersion | undefined> } = {};
  hnsVersion(): Promise<HnsVersion | undefined> {
    const learnt = this.learnt;
    if (!learnt.versionAnswer) {
      const answer = this.hcn.capabilities.v1Supported ? this.hcn.version() : Promise.resolve(undefined);
      learnt.versionAnswer = answer;
      answer.catch(() => {
        if (learnt.versionAnswer === answer) delete learnt.versionAnswer;
      });
    }
    return learnt.versionAnswer;
  }

  /**
   * This API over another facade — a request's own HNS time limit in a resident service, where requests with
   * different hnsTimeoutSeconds run at once — sharing what the API has learnt of the host (its HNS version).
   */
  withHcn(hcn: Hcn): this {
    if (hcn === this.hcn) return this;
    return Object.create(this, { hcn: { value: hcn, enumerable: true } }) as this;
  }
}

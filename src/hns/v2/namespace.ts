/** V2Api's namespaces, through HCN (microsoft/hcsshim hcn/hcnnamespace.go); the link after v2/endpoint.ts. */
import type { DeleteOutcome } from '../api-types';
import { detachOutcome, orUndefined } from '../answers';
import { V2Endpoints } from './endpoint';

export abstract class V2Namespaces extends V2Endpoints {
  /**
   * HcnOpenNamespace + HcnModifyNamespace (microsoft/hcsshim hcn/hcnnamespace.go AddNamespaceEndpoint); with held
   * handles, the namespace's handle is kept until its endpoints are detached.
   */
  async attachNamespace(endpointId: string, namespaceId: string): Promise<void> {
    if (this.held) await this.held.attach(this.hcn, namespaceId, endpointId);
    else await this.hcn.addNamespaceEndpoint(namespaceId, endpointId);
  }
  /**
   * HcnOpenNamespace + HcnModifyNamespace (microsoft/hcsshim hcn/hcnnamespace.go RemoveNamespaceEndpoint); with held
   * handles, one HcnModifyNamespace on the handle kept since the attach.
   */
  detachNamespace(endpointId: string, namespaceId: string): Promise<DeleteOutcome> {
    if (this.held) return detachOutcome(this.held.detach(this.hcn, namespaceId, endpointId));
    return detachOutcome(this.hcn.removeNamespaceEndpoint(namespaceId, endpointId));
  }
  async namespaceExists(namespaceId: string): Promise<boolean> {
    return (await orUndefined(this.hcn.getNamespace(namespaceId))) !== undefined;
  }
}

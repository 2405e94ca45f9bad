/** V1Api's namespaces, through HNSCall (microsoft/hcsshim internal/hns/namespace.go); the link after v1/endpoint.ts. */
import type { DeleteOutcome } from '../api-types';
import { detachOutcome, orUndefined } from '../answers';
import type { Hcn } from '../hcn';
import { V1Endpoints } from './endpoint';

/** v1 namespace attach: microsoft/hcsshim internal/hns/namespace.go AddNamespaceEndpoint. */
function addToNamespaceV1(hcn: Hcn, namespaceId: string, endpointId: string): Promise<unknown> {
  return hcn.hnsCall('POST', `/namespaces/${namespaceId}/addresource`, { Type: 'Endpoint', Data: { Id: endpointId } });
}

/** v1 namespace detach: microsoft/hcsshim internal/hns/namespace.go RemoveNamespaceEndpoint. */
function removeFromNamespaceV1(hcn: Hcn, namespaceId: string, endpointId: string): Promise<unknown> {
  return hcn.hnsCall('POST', `/namespaces/${namespaceId}/removeresource`, {
    Type: 'Endpoint',
    Data: { Id: endpointId },
  });
}

export abstract class V1Namespaces extends V1Endpoints {
  async attachNamespace(endpointId: string, namespaceId: string): Promise<void> {
    await addToNamespaceV1(this.hcn, namespaceId, endpointId);
  }
  detachNamespace(endpointId: string, namespaceId: string): Promise<DeleteOutcome> {
    return detachOutcome(removeFromNamespaceV1(this.hcn, namespaceId, endpointId));
  }
  async namespaceExists(namespaceId: string): Promise<boolean> {
    return (await orUndefined(this.hcn.hnsCall('GET', `/namespaces/${namespaceId}`))) !== undefined;
  }
}

/**
 * Namespace settings and namespace modify requests. v2 create: `{}` or `{"Type":"HostDefault","NamespaceId":5,…}`;
 * v1 create (POST /namespaces/): `{"IsDefault":true}`. Modify (HcnModifyNamespace):
 * `{"ResourceType":"Endpoint","RequestType":"Add","Settings":{"EndpointId":…}}` (resource types: microsoft/hcsshim
 * hcn/hcnnamespace.go NamespaceResourceType, Container and Endpoint), also with the numeric forms the docs' C++
 * samples send (ResourceType 1 = Endpoint, 0 = Container; RequestType 0 = Add, 1 = Remove: MicrosoftDocs
 * windowsserverdocs WindowsServerDocs/networking/technologies/hcn/hcn-scenarios.md).
 */
import { HR } from '../hns/hresults';
import {
  enumValue,
  isObj,
  isV2Doc,
  objectOrJson,
  optNumber,
  schemaVersionOf,
  type Obj,
  type SchemaVersion,
} from './json-doc';
import type { NamespaceResource, NamespaceType } from './model';
import { fail } from './sim-error';

export const NAMESPACE_TYPES: readonly NamespaceType[] = ['Host', 'HostDefault', 'Guest', 'GuestDefault'];
export const REQUEST_TYPES = ['Add', 'Remove', 'Update', 'Refresh', 'Reset'] as const;
export type RequestType = (typeof REQUEST_TYPES)[number];

export interface NamespaceInput {
  id?: string;
  type: NamespaceType;
  namespaceId?: number;
  schemaVersion: SchemaVersion;
}

export function parseNamespaceInput(doc: Obj): NamespaceInput {
  if (isV2Doc(doc)) {
    const type =
      doc.Type === undefined
        ? 'Host'
        : (enumValue(doc.Type, NAMESPACE_TYPES) ?? fail(HR.E_INVALIDARG, `namespace type ${String(doc.Type)}`));
    return {
      id: typeof doc.ID === 'string' ? doc.ID : undefined,
      type,
      namespaceId: optNumber(doc, 'NamespaceId', HR.E_INVALIDARG),
      schemaVersion: schemaVersionOf(doc)!,
    };
  }
  // v1, or a v2 caller that sent no SchemaVersion at all (hcsshim's minimal form always has one).
  const type =
    doc.Type !== undefined ? enumValue(doc.Type, NAMESPACE_TYPES) : doc.IsDefault === true ? 'HostDefault' : 'Host';
  return {
    id: typeof doc.ID === 'string' ? doc.ID : undefined,
    type: type ?? fail(HR.E_INVALIDARG, `namespace type ${String(doc.Type)}`),
    namespaceId: optNumber(doc, 'NamespaceId', HR.E_INVALIDARG) ?? optNumber(doc, 'CompartmentId', HR.E_INVALIDARG),
    schemaVersion: { major: 2, minor: 0 },
  };
}

export interface ResourceRequest {
  request: 'Add' | 'Remove';
  resource: NamespaceResource;
}

export function parseNamespaceModify(doc: Obj): ResourceRequest {
  const resourceType = enumValue(doc.ResourceType, ['Container', 'Endpoint'] as const);
  const request = enumValue(doc.RequestType, REQUEST_TYPES);
  if (!resourceType || !request)
    return fail(HR.REQUEST_UNSUPPORTED, `${String(doc.ResourceType)}/${String(doc.RequestType)}`);
  if (request !== 'Add' && request !== 'Remove') return fail(HR.REQUEST_UNSUPPORTED, `namespace ${request}`);
  if (doc.Settings === undefined || doc.Settings === null) return fail(HR.E_INVALIDARG, 'Settings missing');
  const settings = objectOrJson(doc.Settings, HR.INVALID_JSON, 'Settings');
  const key = resourceType === 'Endpoint' ? 'EndpointId' : 'ContainerId';
  const id = settings[key];
  if (typeof id !== 'string' || id === '') return fail(HR.E_INVALIDARG, `Settings.${key} missing`);
  return { request, resource: { type: resourceType, id } };
}

/** v1 /namespaces/{id}/addresource|removeresource body: {"Type":"Endpoint","Data":{"Id":…}}. */
export function parseV1Resource(doc: Obj, request: 'Add' | 'Remove'): ResourceRequest {
  const type = enumValue(doc.Type, ['Container', 'Endpoint'] as const);
  const data = isObj(doc.Data) ? doc.Data : undefined;
  const id = data?.Id ?? data?.ID;
  if (!type || typeof id !== 'string' || id === '') return fail(HR.E_INVALIDARG, 'resource needs Type and Data.Id');
  return { request, resource: { type, id } };
}

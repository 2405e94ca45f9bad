/**
 * HcnModifyNetwork / HcnModifyEndpoint requests: their envelope (ResourceType, RequestType, Settings) and what a
 * policy request does to an object's policy list. Shared by networks.ts and endpoints.ts.
 */
import { HR } from '../hns/hresults';
import { enumValue, objectOrJson, type Obj } from './json-doc';
import type { Policy } from './model';
import { REQUEST_TYPES } from './parse-namespace';
import { samePolicy } from './policies';
import { fail } from './sim-error';

const HCN_E_POLICY_NOT_FOUND = 0x803b0008;
const HCN_E_POLICY_ALREADY_EXISTS = 0x803b0012;

export interface ModifyRequest {
  resourceType: string;
  request: (typeof REQUEST_TYPES)[number];
  settings: Obj;
}

export function modifyRequest(doc: Obj, resourceTypes: readonly string[]): ModifyRequest {
  const resourceType = enumValue(doc.ResourceType, resourceTypes);
  const request = enumValue(doc.RequestType, REQUEST_TYPES);
  if (!resourceType || !request)
    return fail(HR.REQUEST_UNSUPPORTED, `${String(doc.ResourceType)}/${String(doc.RequestType)}`);
  return { resourceType, request, settings: objectOrJson(doc.Settings ?? {}, HR.INVALID_JSON, 'Settings') };
}

/** Add appends (an identical policy is HCN_E_POLICY_ALREADY_EXISTS), Remove drops (a missing one is
 *  HCN_E_POLICY_NOT_FOUND; empty Settings match by type), Update replaces every policy of the given types. */
export function applyPolicyRequest(current: Policy[], given: Policy[], request: string): Policy[] {
  if (request === 'Add') {
    for (const p of given) if (current.some((c) => samePolicy(c, p))) fail(HCN_E_POLICY_ALREADY_EXISTS, p.type);
    return [...current, ...given];
  }
  if (request === 'Remove') {
    let out = [...current];
    for (const p of given) {
      const byType = Object.keys(p.settings).length === 0;
      const i = out.findIndex((c) => (byType ? c.type === p.type : samePolicy(c, p)));
      if (i < 0) fail(HCN_E_POLICY_NOT_FOUND, p.type);
      out = byType ? out.filter((c) => c.type !== p.type) : out.filter((_, j) => j !== i);
    }
    return out;
  }
  if (request === 'Update') {
    const types = new Set(given.map((p) => p.type));
    return [...current.filter((c) => !types.has(c.type)), ...given];
  }
  return fail(HR.REQUEST_UNSUPPORTED, `policy ${request}`);
}

/**
 * HNS's own lifecycle state of an endpoint (v1 `State`): 0 Uninitialized, 1 Created, 2 Attached, 3 AttachedSharing,
 * 4 Detached, 5 Degraded, 6 Destroyed (microsoft/hcsshim internal/hns/hnsendpoint.go EndpointState). HNS moves an
 * endpoint to Degraded or Destroyed on its own; no public source says when, so the simulator does it only on the
 * operator's word (`ctl endpoint-state ID STATE`), for clients that must judge an endpoint in such a state.
 */
import type { Store } from './store';

const STATES = 6;

export function setEndpointState(store: Store, id: string, state: number): void {
  if (!Number.isInteger(state) || state < 0 || state > STATES)
    throw new Error(`an endpoint state is 0..${STATES} (microsoft/hcsshim EndpointState), not ${state}`);
  store.endpoint(id).state = state;
}

/**
 * V2Api.detachNamespace: one v1 HNSCall (POST /namespaces/{id}/removeresource, as microsoft/hcsshim
 * internal/hns/namespace.go RemoveNamespaceEndpoint) where HNSCall exists, and the answer's meaning kept when HNS
 * refuses it: "not attached" and "not found" still count as detached whether or not the v1 envelope carries an
 * ErrorCode (hcsshim's hnsResponse has none): an answer with no exact HRESULT is asked again through HCN.
 */
import { V2Api } from '../../src/hns/api';
import { cni, bridgeConf, useHarness, type Harness } from '../helpers/cni-harness';
import { lastSeq, newNamespace } from '../plugin/support';

describe.each([
  ['with ErrorCode in v1 envelopes', true],
  ['without ErrorCode in v1 envelopes', false],
])('detaching an endpoint from its namespace (%s)', (_name, v1ErrorCodes) => {
  let h: Harness;
  useHarness({ v1ErrorCodes }, (x) => (h = x));
  const api = () => new V2Api(h.runtime.hcn({ hnsTimeoutSeconds: 30 }));
  const opsSince = async (seq: number) =>
    (await h.sim.control.calls()).filter((c) => c.seq > seq && c.pid === process.pid).map((c) => c.op);

  async function attached(): Promise<{ ns: string; endpointId: string }> {
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf: bridgeConf(), containerId: 'pod-d', netns: ns })).exitCode).toBe(0);
    const ep = (await h.sim.control.dump()).endpoints[0]!;
    return { ns, endpointId: String(ep.ID) };
  }

  it('is one HNS call, and the namespace no longer holds the endpoint', async () => {
    const { ns, endpointId } = await attached();
    const seq = await lastSeq(h);
    expect(await api().detachNamespace(endpointId, ns)).toBe('deleted');
    expect(await opsSince(seq)).toEqual(['HNSCall POST /namespaces/{id}/removeresource']);
    expect((await api().getEndpoint(endpointId))?.namespaceId).toBeUndefined();
  });

  it('counts an endpoint already detached as detached (HCN_E_ENDPOINT_NOT_ATTACHED), asking HCN only when v1 gave no code', async () => {
    const { ns, endpointId } = await attached();
    expect(await api().detachNamespace(endpointId, ns)).toBe('deleted');
    const seq = await lastSeq(h);
    expect(await api().detachNamespace(endpointId, ns)).toBe('not-found');
    const again = v1ErrorCodes ? [] : ['HcnOpenNamespace', 'HcnModifyNamespace'];
    expect(await opsSince(seq)).toEqual(['HNSCall POST /namespaces/{id}/removeresource', ...again]);
  });

  it('takes a v1 refusal with an ErrorCode as it is, and asks HCN about one without', async () => {
    const { ns, endpointId } = await attached();
    await h.sim.control.failCall('HNSCall POST /namespaces/{id}/removeresource', 0x80070005); // E_ACCESSDENIED
    const seq = await lastSeq(h);
    const detached = api().detachNamespace(endpointId, ns);
    if (v1ErrorCodes) await expect(detached).rejects.toMatchObject({ hresult: 0x80070005 });
    else expect(await detached).toBe('deleted'); // "Access is denied." alone is E_FAIL: HCN answers for it
    const again = v1ErrorCodes ? [] : ['HcnOpenNamespace', 'HcnModifyNamespace'];
    expect(await opsSince(seq)).toEqual(['HNSCall POST /namespaces/{id}/removeresource', ...again]);
  });

  it('counts a namespace that is gone as detached', async () => {
    const { endpointId } = await attached();
    expect(await api().detachNamespace(endpointId, '11111111-2222-3333-4444-555555555555')).toBe('not-found');
  });
});

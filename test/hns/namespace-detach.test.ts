/**
 * V2Api.detachNamespace: HCN's HcnOpenNamespace + HcnModifyNamespace (microsoft/hcsshim hcn/hcnnamespace.go
 * RemoveNamespaceEndpoint) whether or not HNSCall exists: a write goes to one API, never v1 first and HCN after.
 * "not attached" and "not found" count as detached; any other refusal is the caller's, as HNS gave it.
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
  const api = () => new V2Api(h.deps.hns.hcn({ hnsTimeoutSeconds: 30 }));
  const opsSince = async (seq: number) =>
    (await h.sim.control.calls()).filter((c) => c.seq > seq && c.pid === process.pid).map((c) => c.op);

  async function attached(): Promise<{ ns: string; endpointId: string }> {
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf: bridgeConf(), containerId: 'pod-d', netns: ns })).exitCode).toBe(0);
    const ep = (await h.sim.control.dump()).endpoints[0]!;
    return { ns, endpointId: String(ep.ID) };
  }

  it("is HCN's open and modify, and the namespace no longer holds the endpoint", async () => {
    const { ns, endpointId } = await attached();
    const seq = await lastSeq(h);
    expect(await api().detachNamespace(endpointId, ns)).toBe('deleted');
    expect(await opsSince(seq)).toEqual(['HcnOpenNamespace', 'HcnModifyNamespace']);
    expect((await api().getEndpoint(endpointId))?.namespaceId).toBeUndefined();
  });

  it('counts an endpoint already detached as detached (HCN_E_ENDPOINT_NOT_ATTACHED), without asking v1', async () => {
    const { ns, endpointId } = await attached();
    expect(await api().detachNamespace(endpointId, ns)).toBe('deleted');
    const seq = await lastSeq(h);
    expect(await api().detachNamespace(endpointId, ns)).toBe('not-found');
    expect(await opsSince(seq)).toEqual(['HcnOpenNamespace', 'HcnModifyNamespace']);
  });

  it("takes HCN's refusal as it is, and asks no other API", async () => {
    const { ns, endpointId } = await attached();
    await h.sim.control.failCall('HcnModifyNamespace', 0x80070005); // E_ACCESSDENIED
    const seq = await lastSeq(h);
    await expect(api().detachNamespace(endpointId, ns)).rejects.toMatchObject({ hresult: 0x80070005 });
    expect(await opsSince(seq)).toEqual(['HcnOpenNamespace', 'HcnModifyNamespace']);
  });

  it('counts a namespace that is gone as detached', async () => {
    const { endpointId } = await attached();
    expect(await api().detachNamespace(endpointId, '11111111-2222-3333-4444-555555555555')).toBe('not-found');
  });
});

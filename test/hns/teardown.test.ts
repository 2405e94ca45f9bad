/**
 * src/hns/teardown.ts, the one home of tearing HNS objects down: the calls it makes, in order, against a recording
 * stand-in for HnsApi — detach before delete, a "not found" confirmed by one listing and nothing more, a listing that
 * fails counting as "still there", HNS unreachable always propagating.
 */
import type { EndpointInfo, HnsApi } from '../../src/hns/api';
import { HcnError } from '../../src/hns/hcn-error';
import { HR } from '../../src/hns/hresults';
import { deleteConfirmed, detachEndpoint, endpointsListed, removeEndpoint } from '../../src/hns/teardown';

type Answer = 'deleted' | 'not-found' | Error;

interface Script {
  deleteEndpoint?: Answer;
  deleteNetwork?: Answer;
  detachNamespace?: Answer;
  hotDetach?: Error;
  /** What the listings show (ids), or the error they fail with. */
  listed?: string[] | Error;
  hotAttachUnavailable?: string;
}

function recording(script: Script): { api: HnsApi; calls: string[] } {
  const calls: string[] = [];
  const answer = async (name: string, a: Answer | undefined): Promise<'deleted' | 'not-found'> => {
    calls.push(name);
    if (a instanceof Error) throw a;
    return a ?? 'deleted';
  };
  const listing = async (name: string) => {
    calls.push(name);
    if (script.listed instanceof Error) throw script.listed;
    return (script.listed ?? []).map((id) => ({ id, name: id }) as EndpointInfo);
  };
  const api = {
    deleteEndpoint: () => answer('deleteEndpoint', script.deleteEndpoint),
    deleteNetwork: () => answer('deleteNetwork', script.deleteNetwork),
    detachNamespace: () => answer('detachNamespace', script.detachNamespace),
    hotDetach: async () => {
      calls.push('hotDetach');
      if (script.hotDetach) throw script.hotDetach;
      return 'done';
    },
    hotAttachUnavailable: () => script.hotAttachUnavailable,
    listEndpoints: () => listing('listEndpoints'),
    listNetworks: () => listing('listNetworks'),
  } as unknown as HnsApi;
  return { api, calls };
}

const hcnError = (op: string, hresult: number) => new HcnError(op, hresult, null);
const ID = 'ep-1';

describe('teardown (src/hns/teardown.ts)', () => {
  it('detaches (namespace, then container) before it deletes; a delete HNS answers costs no listing', async () => {
    const { api, calls } = recording({});
    await removeEndpoint(api, ID, { namespaceId: 'ns-1', containerId: 'c-1' });
    expect(calls).toEqual(['detachNamespace', 'hotDetach', 'deleteEndpoint']);
  });

  it('does not hot-detach where hot attach is unavailable (nothing could have hot-attached it)', async () => {
    const { api, calls } = recording({ hotAttachUnavailable: 'HNSCall (vmcompute.dll)' });
    await removeEndpoint(api, ID, { containerId: 'c-1' });
    expect(calls).toEqual(['deleteEndpoint']);
  });

  it('a "not found" answered or thrown is gone once one listing agrees', async () => {
    for (const deleteEndpoint of ['not-found', hcnError('HcnDeleteEndpoint', HR.ENDPOINT_NOT_FOUND)] as const) {
      const { api, calls } = recording({ deleteEndpoint, listed: ['other'] });
      await deleteConfirmed(api, 'endpoint', ID);
      expect(calls).toEqual(['deleteEndpoint', 'listEndpoints']);
    }
  });

  it('a "not found" for an object HNS still lists is an error; networks are confirmed by the network listing', async () => {
    const ep = recording({ deleteEndpoint: 'not-found', listed: [ID] });
    await expect(deleteConfirmed(ep.api, 'endpoint', ID)).rejects.toThrow(/not found.*but still lists it/);
    const net = recording({ deleteNetwork: 'not-found', listed: ['NET-1'] });
    await expect(deleteConfirmed(net.api, 'network', 'net-1')).rejects.toThrow(/network net-1.*still lists it/);
    expect(net.calls).toEqual(['deleteNetwork', 'listNetworks']);
  });

  it('a listing HNS refuses cannot confirm an absence; one HNS does not answer propagates', async () => {
    const refused = recording({ deleteEndpoint: 'not-found', listed: hcnError('HNSCall GET /endpoints/', HR.E_FAIL) });
    await expect(deleteConfirmed(refused.api, 'endpoint', ID)).rejects.toThrow(/still lists it/);
    expect(await endpointsListed(refused.api, () => true)).toEqual([
      { id: 'unknown', name: expect.stringMatching(/^\(the endpoint listing failed: /) },
    ]);
    const down = hcnError('HNSCall GET /endpoints/', HR.RPC_S_SERVER_UNAVAILABLE);
    const unreachable = recording({ deleteEndpoint: 'not-found', listed: down });
    await expect(deleteConfirmed(unreachable.api, 'endpoint', ID)).rejects.toBe(down);
    await expect(endpointsListed(unreachable.api, () => true)).rejects.toBe(down);
  });

  it('a detach that finds nothing attached is done; any other refusal stops the teardown before the delete', async () => {
    const gone = recording({ detachNamespace: hcnError('HcnModifyNamespace', HR.ENDPOINT_NOT_ATTACHED) });
    await removeEndpoint(gone.api, ID, { namespaceId: 'ns-1' });
    expect(gone.calls).toEqual(['detachNamespace', 'deleteEndpoint']);
    const refused = recording({ detachNamespace: hcnError('HcnModifyNamespace', HR.E_FAIL) });
    await expect(removeEndpoint(refused.api, ID, { namespaceId: 'ns-1' })).rejects.toBeInstanceOf(HcnError);
    expect(refused.calls).toEqual(['detachNamespace']);
  });

  it("a best-effort hot detach (the previous plugins') ignores a refusal, never HNS being unreachable", async () => {
    const refusal = hcnError('HcsModifyComputeSystem', HR.E_FAIL);
    const strict = recording({ hotDetach: refusal });
    await expect(detachEndpoint(strict.api, ID, { containerId: 'c-1' })).rejects.toBe(refusal);
    const lenient = recording({ hotDetach: refusal });
    await removeEndpoint(lenient.api, ID, { containerId: 'c-1' }, { hotDetach: 'best-effort' });
    expect(lenient.calls).toEqual(['hotDetach', 'deleteEndpoint']);
    const down = hcnError('HNSCall GET /endpoints/ep-1', HR.RPC_S_SERVER_UNAVAILABLE);
    const unreachable = recording({ hotDetach: down });
    await expect(
      removeEndpoint(unreachable.api, ID, { containerId: 'c-1' }, { hotDetach: 'best-effort' }),
    ).rejects.toBe(down);
  });

  it("'by-caller' takes the delete's answer as it is: the caller confirms with one listing of its own", async () => {
    const { api, calls } = recording({ deleteEndpoint: 'not-found', listed: [ID] });
    await removeEndpoint(api, ID, { namespaceId: 'ns-1' }, { confirm: 'by-caller' });
    expect(calls).toEqual(['detachNamespace', 'deleteEndpoint']);
  });
});

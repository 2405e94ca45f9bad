/**
 * Detach (src/plugin/attach.ts): a missing endpoint, namespace, container or attachment counts as detached; any other
 * refusal is an error, so a DEL hands the attachment to the audit (a tombstone) rather than take an endpoint still in
 * use for detached.
 */
import { HcnError } from '../../src/hns/hcn-error';
import type { HnsApi } from '../../src/hns/api';
import { HR } from '../../src/hns/hresults';
import { detach } from '../../src/plugin/attach';

function refusing(op: string, hresult: number): HnsApi {
  const fail = async () => {
    throw new HcnError(op, hresult, null);
  };
  return { detachNamespace: fail, hotDetach: fail, hotAttachUnavailable: () => false } as unknown as HnsApi;
}
const inNamespace = { kind: 'namespace' as const, target: 'ns-1' };
const inContainer = { kind: 'container' as const, target: 'sandbox-1' };

describe('detach', () => {
  it('fails when HNS refuses the detach with anything but "not found" or "not attached"', async () => {
    await expect(detach(refusing('HcnModifyNamespace', HR.E_FAIL), 'e1', inNamespace)).rejects.toThrow(/E_FAIL/);
    await expect(detach(refusing('HcsModifyComputeSystem', HR.E_FAIL), 'e1', inContainer)).rejects.toThrow(/E_FAIL/);
  });

  it('counts a missing endpoint or namespace, an endpoint not attached and a container gone as detached', async () => {
    await expect(
      detach(refusing('HcnModifyNamespace', HR.ERROR_NOT_FOUND), 'e1', inNamespace),
    ).resolves.toBeUndefined();
    await expect(
      detach(refusing('HcnModifyNamespace', HR.ENDPOINT_NOT_ATTACHED), 'e1', inNamespace),
    ).resolves.toBeUndefined();
    await expect(
      detach(refusing('HcsModifyComputeSystem', HR.HCS_SYSTEM_NOT_FOUND), 'e1', inContainer),
    ).resolves.toBeUndefined();
  });
});

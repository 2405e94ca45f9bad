/**
 * The plan of a DEL (del-steps.ts DelPlan): the owner, the configuration, the record or its absence, and the mode —
 * read once by `prepare`, plain data never changed afterwards; the HNS API chosen and the capabilities are the DelRun
 * beside it. A shared attachment's DEL touches no HNS, so no API is chosen for it.
 */
import { CniCode, CniError } from '../../cni/cni-error';
import type { NetConf, VerbContext } from '../../cni/types';
import type { HnsApi } from '../../hns/api';
import type { Owner } from '../../state/records';
import type { DelPlan, DelRun, DelVerbDeps } from '../del-steps';
import type { HostHns } from '../host-hns';
import { modeOf, modeOfRecord } from '../modes/choose';
import { step } from '../to-cni-error';

export async function prepare(ctx: VerbContext, deps: DelVerbDeps): Promise<DelRun> {
  const { conf, attachment, log } = ctx;
  const owner: Owner = { containerId: attachment.containerId, ifname: attachment.ifname };
  const store = deps.stores.store(conf, log);
  const record = store.getAttachment(owner);
  const mode = record && record.mode !== 'shared' ? modeOfRecord(record) : modeOf(conf);
  const plan: DelPlan = { conf, attachment, owner, record, mode };
  const api = record?.mode === 'shared' ? undefined : await apiForDel(conf, deps);
  return { plan, api, store, ipam: ctx.ipam, log, addressBook: deps.addressBook };
}

/**
 * The API DEL uses: the configured one, else whichever the host has (an ADD that failed for want of HCN must not
 * leave a DEL failing forever), else none — then nothing of ours can have been created through this host's HNS.
 */
async function apiForDel(conf: NetConf, deps: { readonly hns: HostHns }): Promise<HnsApi | undefined> {
  const settings: NetConf['apiVersion'][] = conf.apiVersion === 'auto' ? ['auto'] : [conf.apiVersion, 'auto'];
  for (const apiVersion of settings) {
    try {
      return (await step('choosing the HNS API', () => deps.hns.api({ ...conf, apiVersion }))).api;
    } catch (e) {
      if (!(e instanceof CniError && e.code === CniCode.API_UNAVAILABLE)) throw e;
    }
  }
  return undefined;
}

/** A DEL with a record needs an API to delete what it names: without one, the runtime must retry. */
export function requireApi(api: HnsApi | undefined): HnsApi {
  if (!api)
    throw new CniError(
      CniCode.TRY_AGAIN_LATER,
      'no HNS API is available on this host to delete the recorded attachment',
    );
  return api;
}

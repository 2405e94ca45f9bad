/** `hcn-cni uninstall` run in-process against a harness's simulator, with the node's directories inside its tmp. */
import * as path from 'path';
import { runUninstall } from '../../src/cli/uninstall';
import { CNI_BIN, type Harness } from '../helpers/cni-harness';

export const nodeBin = (h: Harness): string => path.join(h.tmp, 'node-bin');
export const nodeConf = (h: Harness): string => path.join(h.tmp, 'node-conf');

export async function uninstallIn(h: Harness, args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runUninstall(
    [
      '--containerd-config',
      path.join(h.tmp, 'no-config.toml'),
      '--bin-dir',
      nodeBin(h),
      '--conf-dir',
      nodeConf(h),
      ...args,
    ],
    {
      env: { HCN_SIM: h.sim.address, CNI_PATH: CNI_BIN, HCN_CNI_CLAIMS_DIR: path.join(h.tmp, 'claims') },
      load: {},
      platform: 'linux',
      pid: process.pid,
      now: Date.now,
      out: (s) => void (out += s),
      err: (s) => void (err += s),
    },
  );
  return { code, out, err };
}

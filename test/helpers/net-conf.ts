/**
 * A configuration as a test parses it: the least hcn-cni configuration plus the keys the test is about, read as an
 * ADD on Linux reads it; and the CNI error a refused one gives. Not a test file itself.
 */
import { parseNetConf } from '../../src/cni/config';
import { CniError } from '../../src/cni/cni-error';
import type { NetConf } from '../../src/cni/types';

/** `{cniVersion 1.0.0, name cbr0, type hcn-cni}` with `extra` over it, parsed for an ADD on Linux. */
export function parseAddConf(extra: Record<string, unknown> = {}): NetConf {
  return parseNetConf(
    { cniVersion: '1.0.0', name: 'cbr0', type: 'hcn-cni', ...extra },
    { platform: 'linux', defaults: { stateDir: '/var/lib/hcn-cni' }, verb: 'ADD' },
  );
}

/** The CniError `run` throws, as its code and message; another error is thrown on, and no error fails the test. */
export function cniFailure(run: () => unknown, accepted = 'expected a CniError'): { code: number; msg: string } {
  try {
    run();
  } catch (e) {
    if (e instanceof CniError) return { code: e.code, msg: e.message };
    throw e;
  }
  throw new Error(accepted);
}

/**
 * A self-test's owner: a new one per run. What makes an owner a self-test's, and its namespace's id, are the audit's
 * rules too (src/orphans/selftest-names.ts), which removes a killed run's namespace.
 */
import { randomBytes } from 'node:crypto';
import { SELFTEST_PREFIX } from '../orphans/selftest-names';
import type { Owner } from '../state/records';

export { isSelftestOwner, namespaceIdOf } from '../orphans/selftest-names';

export function newSelftestOwner(): Owner {
  return { containerId: `${SELFTEST_PREFIX}${randomBytes(8).toString('hex')}`, ifname: 'eth0' };
}

// @ts-check
/**
 * The mutations scripts/mutate.js puts into the safety code, one at a time (docs/mutation.md). Each: the file, its
 * exact original text (found once, or the entry is reported stale and must be rewritten), the replacement, the rule it
 * breaks, and the test files to run — in-process tests (a test that runs the plugin as a child process runs dist/,
 * which keeps the original code unless mutate.js --dist). Ids starting with "survivor-" are the mutations that
 * survived the check on main b7ccf33 (and the three it caught only incidentally), rebuilt from their descriptions.
 */
'use strict';

/** @typedef {{ id: string, rule: string, file: string, from: string, to: string, tests: string[] }} Mutation */

const ORPHANS = ['test/orphans/detect.test.ts', 'test/orphans/audit.test.ts', 'test/orphans/sweep-recheck.test.ts'];

/** @type {Mutation[]} */
const MUTATIONS = [
  // ---- the survivors of main b7ccf33, and the three caught only incidentally ----
  {
    id: 'survivor-tombstone-names-by-id',
    rule: "a tombstone condemns an attached endpoint only by id, never by the owner's name alone",
    file: 'src/orphans/detect.ts',
    from: 'const tombstoneNamesIt = s.tombstone?.planned.some((p) => p.kind === kind && sameId(p.id, id));',
    to: 'const tombstoneNamesIt = s.tombstone?.planned.some((p) => p.kind === kind && (p.id ? sameId(p.id, id) : p.name === name));',
    tests: [...ORPHANS, 'test/plugin/owner-collision.test.ts'],
  },
  {
    id: 'survivor-legacy-name-ifname',
    rule: "a name of an earlier version (hcn-cni_ep_<cid>_<ifname>_<h>) names its owner's ifname too",
    file: 'src/orphans/ownership.ts',
    from: 'return parsed.owner.containerId === owner.containerId && parsed.owner.ifname === owner.ifname;',
    to: 'return parsed.owner.containerId === owner.containerId;',
    tests: ['test/orphans/ownership.test.ts', 'test/orphans/detect.test.ts', 'test/plugin/owner-collision.test.ts'],
  },
  {
    id: 'survivor-audit-lists-first',
    rule: 'the audit lists HNS first and reads the state second',
    file: 'src/orphans/audit.ts',
    from:
      '  const [networks, endpoints] = await Promise.all([deps.api.listNetworks(), deps.api.listEndpoints()]);\n' +
      '  const state = deps.store.snapshot();',
    to:
      '  const state = deps.store.snapshot();\n' +
      '  const [networks, endpoints] = await Promise.all([deps.api.listNetworks(), deps.api.listEndpoints()]);',
    tests: ORPHANS,
  },
  {
    id: 'survivor-tidy-owner-remaining',
    rule: 'tidy keeps a tombstone while its owner still has objects in HNS',
    file: 'src/orphans/audit.ts',
    from: 'if (!remaining.has(ownerKey(t)) && now - t.createdAt > deps.graceMs)',
    to: 'if (now - t.createdAt > deps.graceMs)',
    tests: [...ORPHANS, 'test/state/store.test.ts'],
  },
  {
    id: 'survivor-tidy-grace',
    rule: 'tidy keeps a tombstone for its grace period',
    file: 'src/orphans/audit.ts',
    from: 'if (!remaining.has(ownerKey(t)) && now - t.createdAt > deps.graceMs)',
    to: 'if (!remaining.has(ownerKey(t)))',
    tests: [...ORPHANS, 'test/state/store.test.ts'],
  },
  {
    id: 'survivor-del-release-needs-endpoint-gone',
    rule: 'DEL by record releases the IP only once the endpoint is gone',
    file: 'src/plugin/del.ts',
    from: 'const releasable = endpointGone && rec.ipamAllocated && ctx.ipam.configured;',
    to: 'const releasable = rec.ipamAllocated && ctx.ipam.configured;',
    tests: ['test/plugin/safety.test.ts', 'test/plugin/ipam.test.ts'],
  },
  {
    id: 'survivor-del-spares-network-of-spared',
    rule: 'DEL without a record keeps its own network while that network holds an endpoint it spared',
    file: 'src/plugin/del.ts',
    from: 'if (!named.some((e) => !ownEndpoints.includes(e) && sameId(e.networkId, n.id)))',
    to: 'if (!named.some(() => false))',
    tests: ['test/plugin/safety.test.ts', 'test/plugin/owner-collision.test.ts', 'test/plugin/del-tombstone.test.ts'],
  },
  {
    id: 'survivor-failed-listing-keeps-ip',
    rule: 'a failed endpoint listing (HNS reachable) keeps the IP: it cannot say the address is free',
    file: 'src/plugin/ip-holders.ts',
    from: "return addresses.map((a) => ({ id: 'unknown', name, address: bare(a) }));",
    to: 'return [];',
    tests: ['test/plugin/safety.test.ts', 'test/plugin/ipam.test.ts'],
  },
  {
    id: 'survivor-heldby-without-listing-break',
    rule: 'a heldBy tombstone without a listing is skipped, and the later tombstones are still released',
    file: 'src/plugin/pending-ipam.ts',
    from: 'if (!report.endpoints) continue;',
    to: 'if (!report.endpoints) break;',
    tests: ['test/plugin/pending-ipam.test.ts'],
  },
  {
    id: 'survivor-heldby-without-listing-release',
    rule: 'a heldBy tombstone without a listing keeps its IP (nothing says its holder is gone)',
    file: 'src/plugin/pending-ipam.ts',
    from: 'if (!report.endpoints) continue;\n      const still = report.endpoints.filter(',
    to: 'const still = (report.endpoints ?? []).filter(',
    tests: ['test/plugin/pending-ipam.test.ts'],
  },
  {
    id: 'survivor-record-owner-matches-file',
    rule: "a record whose owner is not its file name's is quarantined, not trusted",
    file: 'src/state/store.ts',
    from: "if (fileKey(rec) !== path.basename(file, '.json'))",
    to: 'if (false)',
    tests: ['test/state/store.test.ts', 'test/plugin/state.test.ts'],
  },
  {
    id: 'survivor-repair-claims-with-record',
    rule: 'repair writes its intent only while the record it repairs is there (requireAttachment)',
    file: 'src/plugin/repair.ts',
    from: 'intent = await writeIntent(a, planned, rec.mac, rec);',
    to: 'intent = await writeIntent(a, planned, rec.mac);',
    tests: ['test/plugin/repair.test.ts', 'test/state/store.test.ts'],
  },
  {
    id: 'survivor-agent-future-stamp-due',
    rule: "the node agent's audit is due when the last audit is stamped in the future (a clock stepped back)",
    file: 'src/service/node-agent.ts',
    from: 'if (last !== undefined && now - last < interval && now >= last) continue;',
    to: 'if (last !== undefined && now - last < interval) continue;',
    tests: ['test/service/node-agent-due.test.ts'],
  },
  {
    id: 'survivor-audit-due-boundary',
    rule: "a standalone ADD's whole-node audit is due exactly auditIntervalSeconds after the last",
    file: 'src/plugin/audit-due.ts',
    from: 'rt.now() - last >= conf.auditIntervalSeconds * 1000',
    to: 'rt.now() - last > conf.auditIntervalSeconds * 1000',
    tests: ['test/plugin/audit-due.test.ts', 'test/plugin/add-own-work.test.ts'],
  },
  {
    id: 'survivor-gc-live-intent',
    rule: 'GC leaves a running ADD alone, valid-attachments or not',
    file: 'src/plugin/gc.ts',
    from: '    if (intentLiveness(intent, tombs.get(ownerKey(intent)), rt.now(), rt.os().processStartTime).live) continue;\n',
    to: '',
    tests: ['test/plugin/gc-status.test.ts'],
  },
  {
    id: 'survivor-nic-holder-own-intent-only',
    rule: "the audit of the network holding the NIC leaves out this ADD's own intent only, not other live intents",
    file: 'src/plugin/own-objects.ts',
    from: 'intents: state.intents.filter((i) => i.id !== ownIntent)',
    to: 'intents: state.intents.filter((i) => i.id === ownIntent)',
    tests: ['test/plugin/add-own-work.test.ts', 'test/plugin/timeout.test.ts'],
  },
  {
    id: 'survivor-v2-from-9-2',
    rule: 'auto picks HCN (v2) from HNS 9.2 on',
    file: 'src/plugin/api-version.ts',
    from: '(v.major === min.major && v.minor >= min.minor)',
    to: '(v.major === min.major && v.minor > min.minor)',
    tests: ['test/plugin/api-version.test.ts', 'test/plugin/seed-001.test.ts'],
  },
  {
    id: 'survivor-detach-refusal-is-error',
    rule: 'a detach HNS refuses (not "not found") is an error, not "detached"',
    file: 'src/plugin/attach.ts',
    from: 'if (isNotFound(e) || hasCode(e, HR.ENDPOINT_NOT_ATTACHED) || isComputeSystemMissing(e)) return;',
    to: 'return;',
    tests: ['test/plugin/attach.test.ts', 'test/plugin/del-tombstone.test.ts'],
  },
];

module.exports = { MUTATIONS };

/**
 * When an ADD of the standalone executable audits the whole node (src/plugin/audit-due.ts): once the last whole-node
 * audit is auditIntervalSeconds old, to the millisecond; at once when that stamp lies in the future (a clock stepped
 * back would otherwise postpone every audit until it catches up); never in the service, whose node agent audits.
 * And the one rule every asker uses, in one table: what auditIntervalSeconds 0 means to an ADD (every ADD, in both
 * modes) and to the node agent's timer (the key's default, 60 s).
 */
import { auditDue, wholeNodeAuditDue, type AuditAsker } from '../../src/plugin/audit-due';

const NOW = 10_000_000;
function due(
  last: number | undefined,
  o: { audit?: boolean; auditIntervalSeconds?: number; backgroundAudit?: boolean } = {},
): boolean {
  return wholeNodeAuditDue(
    { audit: o.audit ?? true, auditIntervalSeconds: o.auditIntervalSeconds ?? 60 },
    { backgroundAudit: o.backgroundAudit ?? false, now: () => NOW },
    { lastAudited: () => last },
  );
}

describe('the whole-node audit of a standalone ADD', () => {
  it('is due exactly auditIntervalSeconds after the last one, not a millisecond before', () => {
    expect(due(NOW - 60_000)).toBe(true);
    expect(due(NOW - 59_999)).toBe(false);
    expect(due(NOW - 3_600_000)).toBe(true);
  });

  it('is due when no audit was ever stamped, and when the stamp lies in the future (a clock stepped back)', () => {
    expect(due(undefined)).toBe(true);
    expect(due(NOW + 1)).toBe(true);
    expect(due(NOW + 3_600_000)).toBe(true);
  });

  it('is due on every ADD with auditIntervalSeconds 0, never with the audit off or in the service', () => {
    expect(due(NOW, { auditIntervalSeconds: 0 })).toBe(true);
    expect(due(NOW - 3_600_000, { audit: false })).toBe(false);
    expect(due(undefined, { audit: false, auditIntervalSeconds: 0 })).toBe(false);
    expect(due(NOW - 3_600_000, { backgroundAudit: true })).toBe(false);
  });
});

describe('the one audit-due rule, by asker', () => {
  const ASKERS: Record<string, AuditAsker> = {
    'standalone ADD': { by: 'add', backgroundAudit: false },
    'service ADD': { by: 'add', backgroundAudit: true },
    'node agent': { by: 'timer' },
  };
  const ago = (ms: number) => NOW - ms;
  it.each([
    // who asks, the intervals of one state directory's configurations (s), the last audit, due
    ['standalone ADD', [60], ago(60_000), true],
    ['standalone ADD', [60], ago(59_999), false],
    ['standalone ADD', [60], undefined, true],
    ['standalone ADD', [60], NOW + 1, true],
    ['standalone ADD', [0], NOW, true],
    ['service ADD', [60], undefined, false],
    ['service ADD', [60], ago(3_600_000), false],
    ['service ADD', [0], NOW, true],
    ['node agent', [60], ago(60_000), true],
    ['node agent', [60], ago(59_999), false],
    ['node agent', [60], undefined, true],
    ['node agent', [60], NOW + 3_600_000, true],
    ['node agent', [0], ago(59_999), false],
    ['node agent', [0], ago(60_000), true],
    ['node agent', [0, 30], ago(30_000), true],
    ['node agent', [3600, 30], ago(29_999), false],
  ] as const)('%s, intervals %j s, last audit %p: due %p', (who, intervals, last, expected) => {
    const confs = intervals.map((auditIntervalSeconds) => ({ auditIntervalSeconds }));
    expect(auditDue(ASKERS[who]!, confs, () => last, NOW)).toBe(expected);
  });
});

/**
 * When an ADD of the standalone executable audits the whole node (src/plugin/audit-due.ts): once the last whole-node
 * audit is auditIntervalSeconds old, to the millisecond; at once when that stamp lies in the future (a clock stepped
 * back would otherwise postpone every audit until it catches up); never in the service, whose node agent audits.
 */
import { wholeNodeAuditDue } from '../../src/plugin/audit-due';

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

/**
 * Where the service's events go: every HCN call the runtime makes (its observer) to what watches HNS (the one
 * HNS-health tracker, hns-health.ts) and to the counts; every verb, audit and repair to the counts — the tally always,
 * the Prometheus metrics once they are on (tally.ts, prometheus.ts). Made before the runtime, so the runtime's observer
 * never refers to a part declared after it: the parts subscribe as they are made.
 */
import type { HcnCallObservation } from '../../hns/hcn';
import type { AuditObservation, RuntimeObserver } from '../../plugin/observer';
import { callEvent, Tally, type MetricsSink } from './tally';

export class ServiceEvents implements MetricsSink {
  readonly tally = new Tally();
  private readonly sinks: MetricsSink[] = [this.tally];
  private readonly callWatchers: Array<(call: HcnCallObservation) => void> = [];

  /** The runtime's observer: HCN calls to their watchers (in the order they subscribed), audits to the counts. */
  readonly observer: RuntimeObserver = {
    hcnCall: (c) => {
      for (const watch of this.callWatchers) watch(c);
    },
    audit: (o) => this.audit(o),
  };

  /** Tells `watch` of every HCN call from now on. */
  onHcnCall(watch: (call: HcnCallObservation) => void): void {
    this.callWatchers.push(watch);
  }

  /** Counts HCN calls (from now on, after the watchers already subscribed). */
  countHcnCalls(): void {
    this.onHcnCall((c) => {
      const e = callEvent(c);
      this.hcnCall(e.op, e.seconds, e.hresult);
    });
  }

  /** Another place the counts go (the Prometheus metrics). */
  addSink(sink: MetricsSink): void {
    this.sinks.push(sink);
  }

  verb(verb: string, code: string, seconds: number): void {
    for (const s of this.sinks) s.verb(verb, code, seconds);
  }
  hcnCall(op: string, seconds: number, hresult?: string): void {
    for (const s of this.sinks) s.hcnCall(op, seconds, hresult);
  }
  audit(observation: AuditObservation): void {
    for (const s of this.sinks) s.audit(observation);
  }
  repair(outcome: string): void {
    for (const s of this.sinks) s.repair(outcome);
  }
}

// @ts-check
/** What more than one benchmark uses: the quantile of a sample, and the HNS latencies of a realistic pod ADD. */
'use strict';

/** The q-quantile (0..1) of xs, interpolating between the two nearest ranks. @param {number[]} xs @param {number} q */
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

/**
 * Per-call simulator latencies (ms) for the parallel-pods benchmarks: HNS's endpoint create dominates, the rest are
 * a few ms (the ordering model is src/sim/engine.ts). The same figures in pods50 and service, so their makespan ratios
 * compare.
 */
const POD_LATENCY = Object.freeze({
  '*': 2,
  HcnCreateEndpoint: 60,
  HcnModifyNamespace: 20,
  HcnDeleteEndpoint: 30,
  'HNSCall POST /endpoints/{id}/attach': 20,
});

module.exports = { quantile, POD_LATENCY };

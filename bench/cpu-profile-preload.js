// @ts-check
/**
 * Preloaded (`node --require`) into the service by verb-profile.bench.js: a V8 CPU profile of the whole process,
 * written to $HCN_BENCH_CPU_PROFILE on SIGUSR2. `node --cpu-prof` cannot be used: the service ends with the addon's
 * exitNow (src/cli/hcn-cni.ts exit()), which skips the exit hooks that write that profile.
 */
'use strict';
const fs = require('fs');
const inspector = require('inspector');

const out = process.env.HCN_BENCH_CPU_PROFILE;
if (out) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 200 });
  session.post('Profiler.start');
  process.on('SIGUSR2', () => {
    session.post('Profiler.stop', (err, res) => {
      if (err) fs.writeFileSync(`${out}.error`, String(err));
      else fs.writeFileSync(out, JSON.stringify(res.profile));
    });
  });
}

/**
 * The service-mode soak: 300 pod lifecycles through the real native shim and `hcn-cni serve` (a child
 * process), 8 at a time, with the real host-local IPAM, while
 *  - "sick" pods (every 4th) hang in HNS: they are Docker-style (CNI_NETNS "none"), so their ADD hot-adds the endpoint
 *    through HCS, and the simulator never answers HcsOpenComputeSystem (until released); their conf says
 *    hnsTimeoutSeconds 1, so each such ADD times out and leaves its call abandoned in the service. Each sick pod
 *    ADDs twice (the runtime's retry), so well over 32 calls hang in one service process — the size of libuv's pool,
 *    which HCN calls used before they got threads of their own. HcsOpenComputeSystem is a read in the simulator (src/sim/op-table.ts
 *    planHcs), served concurrently, and healthy pods (HCN namespace GUIDs) never make it: a hung mutation would
 *    hold HNS's single mutation queue (src/sim/engine.ts), a hung HNS for every pod, which no plugin can route around;
 *  - some shims are SIGKILLed a few ms after they start (the runtime's timeout), then DEL and a retried ADD follow;
 *  - the service is killed with SIGKILL once (shims then fall back to the standalone executable) and restarted;
 *  - HNS restarts once (src/sim/engine.ts restart: in-flight calls fail, endpoints and namespaces are gone).
 * Checked DURING the run: at every host-local DEL, HNS shows no endpoint with an address being released (a wrapper
 * `host-local` first on CNI_PATH asks the simulator, then runs the real one); no verb of a healthy pod fails, except
 * for pods whose lifecycle overlaps the service kill or the HNS restart (those the runtime retries from a new
 * sandbox). Checked at the END, after the hangs are released and every pod is DELeted: nothing leaked — no
 * endpoint in HNS, no address held, no attachment, intent or quarantined record left, no tombstone keeping an IP.
 * Quiet when green; on failure one summary line says what happened.
 */
import * as fs from 'fs';
import * as path from 'path';
import { seededRandom } from '../../src/sim/rng';
import { bridgeConf, CNI_BIN, useHarness, type CniCall, type Harness } from '../helpers/cni-harness';
import { heldIps, hostLocal, newNamespace, recordFiles, sleep, until } from '../plugin/support';
import { makeBin, startServiceProcess, startShim, type Bin, type RunningService } from './support';

const LIFECYCLES = 300;
const PARALLEL = 8;
const SICK_EVERY = 4;
const KILL_SERVICE_AT = 100;
const HNS_RESTART_AT = 200;
const HNS_DOWN_MS = 300;
const KILL_SHIM_RATE = 0.15;
/** Every 3rd healthy pod is also CHECKed between its ADD and DEL. */
const CHECK_EVERY = 3;
/** libuv's default pool size in the service before HCN calls got threads of their own (src/cli/hcn-cni.ts UV_THREADPOOL_SIZE). */
const POOL_THREADS = 32;
/** Healthy failures outside the windows after which the soak stops starting pods (a stalled service). */
const GIVE_UP_AFTER = 8;
/**
 * When the soak stops starting pods, whatever is left: only a stalled service should reach it. On a loaded 2-CPU
 * machine 300 lifecycles took over 150 s, so the budget leaves room for a slow machine (the jest timeout is 600 s).
 */
const SOAK_BUDGET_MS = 360_000;
/** Far above any verb's own HNS timeouts (10 s each call): only a stalled service reaches it. */
const VERB_DEADLINE_MS = 40_000;
const HUNG_OP = 'HcsOpenComputeSystem';

let h: Harness;
useHarness(undefined, (x) => (h = x));

interface Window {
  what: string;
  from: number;
  to: number;
}

/**
 * A wrapper `host-local`, first on CNI_PATH, that checks HNS before every DEL releases addresses, then runs the real
 * host-local. The check is a small Python script (a Node process per DEL would cost the loaded machine more than the
 * soak itself): which addresses does the container hold (host-local keeps <dataDir>/<network>/<ip>, first line the
 * container id), and does the simulator's dump (the `dump` control command, docs/sim-protocol.md) show an endpoint
 * with one of them?
 */
function guardedHostLocal(
  dir: string,
  ipamDir: string,
  simAddress: string,
): { violations: () => string[]; releases: () => number } {
  if (!simAddress.startsWith('unix:')) throw new Error(`the guard speaks to a unix socket, not ${simAddress}`);
  fs.mkdirSync(dir, { recursive: true });
  const violations = path.join(dir, 'violations');
  const releases = path.join(dir, 'releases');
  const guard = path.join(dir, 'guard.py');
  fs.writeFileSync(
    guard,
    String.raw`import json, os, re, socket
cid = os.environ.get('CNI_CONTAINERID', '')
d = ${JSON.stringify(path.join(ipamDir, 'cbr0'))}
held = []
for f in (os.listdir(d) if os.path.isdir(d) else []):
    if re.fullmatch(r'\d+\.\d+\.\d+\.\d+', f):
        try:
            with open(os.path.join(d, f)) as fh:
                if fh.readline().strip() == cid:
                    held.append(f)
        except OSError:
            pass
if held:
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(${JSON.stringify(simAddress.slice('unix:'.length))})
        s.sendall(b'{"v":1,"ctl":"dump","args":{}}\n')
        buf = b''
        while b'\n' not in buf:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            buf += chunk
        endpoints = json.loads(buf.split(b'\n')[0])['result']['endpoints']
        lines = [cid + ': released ' + ip + ' while HNS shows endpoint ' + ep['ID'] + ' (' + ep['Name'] + ')'
                 for ep in endpoints for ip in held if '"' + ip + '"' in json.dumps(ep)]
    except Exception as e:
        lines = [cid + ': could not ask HNS before the release: ' + repr(e)]
    if lines:
        with open(${JSON.stringify(violations)}, 'a') as fh:
            fh.write('\n'.join(lines) + '\n')
    with open(${JSON.stringify(releases)}, 'a') as fh:
        fh.write(' '.join(held) + '\n')
`,
  );
  // Debian's python3 directly: a version manager's shim first on PATH would add a shell start to every DEL.
  const python = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  fs.writeFileSync(
    path.join(dir, 'host-local'),
    `#!/bin/sh\nif [ "$CNI_COMMAND" = DEL ]; then\n  conf=$(cat)\n  '${python}' -S '${guard}'\n` +
      `  printf '%s' "$conf" | '${CNI_BIN}/host-local'\n  exit $?\nfi\nexec '${CNI_BIN}/host-local'\n`,
    { mode: 0o755 },
  );
  const lines = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean) : []);
  return { violations: () => lines(violations), releases: () => lines(releases).length };
}

it(`${LIFECYCLES} lifecycles through shims, ${PARALLEL} at a time, hung HNS calls, killed shims, a service kill -9 and an HNS restart: healthy pods unharmed, no IP freed under a live endpoint, nothing leaked`, async () => {
  const t0 = Date.now();
  const random = seededRandom(19);
  const bin: Bin = makeBin(h);
  const guardDir = path.join(h.tmp, 'guard-bin');
  const guard = guardedHostLocal(guardDir, path.join(h.tmp, 'ipam'), h.sim.address);
  const cniPath = `${guardDir}:${CNI_BIN}`;
  const ipam = hostLocal(h, '10.244.1.0/24', {
    ranges: [[{ subnet: '10.244.1.0/24', rangeStart: '10.244.1.10', rangeEnd: '10.244.1.250', gateway: '10.244.1.1' }]],
  });
  // 1.0.0, which Debian's host-local speaks: at 1.1.0 every IPAM request is made twice (src/cni/ipam.ts runNegotiated).
  const healthyConf = bridgeConf({ cniVersion: '1.0.0', ipam, hnsTimeoutSeconds: 10 });
  const sickConf = { ...healthyConf, hnsTimeoutSeconds: 1 };
  const address = path.join(h.tmp, 'run', 'service.sock');
  let service: RunningService = await startServiceProcess(h, address);

  const windows: Window[] = [];
  const openWindow = (what: string): Window => {
    const w = { what, from: Date.now(), to: Infinity };
    windows.push(w);
    return w;
  };
  const overlaps = (from: number, to: number) => windows.some((w) => from <= w.to && to >= w.from);

  const healthyFailures: string[] = [];
  const stats = {
    lifecycles: 0,
    healthy: 0,
    sick: 0,
    excused: 0,
    shimsKilled: 0,
    sickTimeouts: 0,
    abandonedNow: 0,
    maxAbandoned: 0,
    delRetries: 0,
    gaveUp: '',
  };
  let cleaningUp = false;
  const stop = () => !cleaningUp && stats.gaveUp !== '';
  const elapsed = () => `+${((Date.now() - t0) / 1000).toFixed(1)}s`;
  // Which service process a sick ADD's abandoned call lives in (a new process starts with none).
  let serviceEpoch = 0;
  let killedPid = 0;

  /** Pods whose last DEL has not succeeded yet: the runtime keeps DELeting them. */
  const pods = new Map<string, { conf: Record<string, unknown>; netns: string }>();

  type Out = { exitCode: number; killed: boolean; json?: Record<string, unknown> };
  const shim = async (c: Omit<CniCall, 'path'>, killAfterMs?: number): Promise<Out> => {
    const call = { ...c, path: cniPath };
    if (c.verb === 'ADD') pods.set(c.containerId!, { conf: c.conf, netns: c.netns! });
    const run = startShim(h, bin, address, call, JSON.stringify({ stateDir: h.stateDir, ...c.conf }));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => run.child.kill('SIGKILL'), killAfterMs);
    // The runtime's own limit: a verb not answered by then is killed and counts as failed (a stalled service).
    let overdue = false;
    const deadline = setTimeout(() => {
      overdue = true;
      run.child.kill('SIGKILL');
    }, VERB_DEADLINE_MS);
    const out = await run.done;
    if (timer) clearTimeout(timer);
    clearTimeout(deadline);
    if (overdue) return { exitCode: -1, killed: false, json: { msg: `no answer within ${VERB_DEADLINE_MS} ms` } };
    const killed = out.signal === 'SIGKILL';
    if (killed) stats.shimsKilled++;
    return { exitCode: out.exitCode, killed, ...(out.json ? { json: out.json } : {}) };
  };
  const said = (o: Out) => `exit ${o.exitCode} code ${String(o.json?.code)} ${String(o.json?.msg ?? '')}`;

  /** A healthy pod's verb failed: excused when its lifecycle overlaps a window, else a finding. */
  const healthyFailed = (id: string, verb: string, since: number, o: Out): boolean => {
    if (overlaps(since, Date.now())) {
      stats.excused++;
      return true;
    }
    healthyFailures.push(`${id} ${verb} ${said(o)} at ${elapsed()}`);
    if (healthyFailures.length >= GIVE_UP_AFTER && !stop()) stats.gaveUp = `${GIVE_UP_AFTER} healthy failures`;
    return false;
  };

  /** The runtime retries a DEL until it succeeds; a healthy pod's failed DEL counts as a verb failure. */
  const delUntilDone = async (id: string, conf: Record<string, unknown>, netns: string, since?: number) => {
    for (let attempt = 0; attempt < 30; attempt++) {
      const out = await shim({ verb: 'DEL', conf, containerId: id, netns });
      if (out.exitCode === 0) {
        pods.delete(id);
        return true;
      }
      stats.delRetries++;
      if (since !== undefined) healthyFailed(id, 'DEL', since, out);
      if (stop()) return false;
      await sleep(100);
    }
    return false;
  };

  const namespace = async () => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await newNamespace(h);
      } catch (e) {
        if (attempt >= 50) throw e; // HNS restarting: it answers again after HNS_DOWN_MS
        await sleep(50);
      }
    }
  };

  const healthy = async (i: number) => {
    const id = `pod-${i}`;
    for (let attempt = 0; attempt < 3 && !stop(); attempt++) {
      const since = Date.now();
      const netns = await namespace();
      const kill = random() < KILL_SHIM_RATE ? Math.floor(random() * 200) : undefined;
      let add = await shim({ verb: 'ADD', conf: healthyConf, containerId: id, netns }, kill);
      if (add.killed) {
        // The runtime gave up on the ADD: it DELs, then tries again.
        if (!(await delUntilDone(id, healthyConf, netns, since))) return;
        add = await shim({ verb: 'ADD', conf: healthyConf, containerId: id, netns });
      }
      if (add.exitCode !== 0) {
        const excused = healthyFailed(id, 'ADD', since, add);
        await delUntilDone(id, healthyConf, netns, since);
        if (excused) continue;
        return;
      }
      if (i % CHECK_EVERY !== 0) {
        await delUntilDone(id, healthyConf, netns, since);
        return;
      }
      const check = await shim({
        verb: 'CHECK',
        conf: { ...healthyConf, prevResult: add.json },
        containerId: id,
        netns,
      });
      if (check.exitCode !== 0) {
        const excused = healthyFailed(id, 'CHECK', since, check);
        await delUntilDone(id, healthyConf, netns, since);
        if (excused) continue;
        return;
      }
      await delUntilDone(id, healthyConf, netns, since);
      return;
    }
  };

  const sick = async (i: number) => {
    const id = `sick-${i}`;
    await h.sim.control.addContainer(id);
    for (let attempt = 0; attempt < 2 && !stop(); attempt++) {
      const epoch = serviceEpoch;
      const kill = random() < KILL_SHIM_RATE ? Math.floor(random() * 200) : undefined;
      const add = await shim({ verb: 'ADD', conf: sickConf, containerId: id, netns: 'none' }, kill);
      if (!add.killed && add.exitCode !== 0 && /no answer from HNS/.test(String(add.json?.msg))) {
        stats.sickTimeouts++;
        if (epoch === serviceEpoch && !overlaps(Date.now(), Date.now())) {
          stats.abandonedNow++;
          stats.maxAbandoned = Math.max(stats.maxAbandoned, stats.abandonedNow);
        }
      }
      await delUntilDone(id, sickConf, 'none');
    }
    // The runtime removes the sandbox container; a hung open of it that HNS answers later finds nothing to attach.
    await h.sim.control.removeContainer(id);
  };

  let next = 0;
  const worker = async () => {
    for (let i = next++; i < LIFECYCLES && !stop(); i = next++) {
      if (Date.now() - t0 > SOAK_BUDGET_MS) {
        stats.gaveUp ||= `over ${SOAK_BUDGET_MS / 1000} s`;
        break;
      }
      if (i === KILL_SERVICE_AT) {
        const w = openWindow('service kill -9');
        const fellBack = bin.standaloneRuns();
        killedPid = service.child.pid!;
        await service.kill();
        serviceEpoch++;
        stats.abandonedNow = 0;
        // The other pods' shims find no service and run the standalone executable until it is back.
        await until(() => (bin.standaloneRuns() > fellBack ? true : undefined), 60_000, 'a shim to fall back');
        service = await startServiceProcess(h, address);
        w.to = Date.now();
      }
      if (i === HNS_RESTART_AT) {
        const w = openWindow('HNS restart');
        await h.sim.control.restart({ downMs: HNS_DOWN_MS });
        stats.abandonedNow = 0; // the restart failed every hung call
        await sleep(HNS_DOWN_MS);
        w.to = Date.now();
      }
      if (i % SICK_EVERY === 1) {
        stats.sick++;
        await sick(i);
      } else {
        stats.healthy++;
        await healthy(i);
      }
      stats.lifecycles++;
    }
  };

  const undeleted: string[] = [];
  let last: Out;
  let lastDel: Out;
  await h.sim.control.hang(HUNG_OP, { count: 1_000_000 });
  try {
    try {
      await Promise.all(Array.from({ length: PARALLEL }, worker));
    } finally {
      // HNS answers again: the hang rule goes, the hung calls complete.
      await h.sim.control.reset({ objects: false });
      await h.sim.control.release();
    }
    await h.sim.control.waitIdle(30_000);
    // Every pod not DELeted yet is (the runtime's retries), then one more pod's ADD and DEL run the audit.
    cleaningUp = true; // the cleanup's DELs retry, whatever happened before
    for (const [id, p] of pods) if (!(await delUntilDone(id, p.conf, p.netns))) undeleted.push(id);
    const lastNs = await namespace();
    last = await shim({ verb: 'ADD', conf: healthyConf, containerId: 'final', netns: lastNs });
    lastDel = await shim({ verb: 'DEL', conf: healthyConf, containerId: 'final', netns: lastNs });
    await h.sim.control.waitIdle(30_000);
  } finally {
    await service.kill();
  }

  const dump = await h.sim.control.dump();
  const tombstonesKeepingIps = recordFiles(h, 'tombstones').filter(
    (t) => 'ipamPending' in (JSON.parse(fs.readFileSync(path.join(h.stateDir, 'tombstones', t), 'utf8')) as object),
  );
  const found = {
    healthyFailures,
    ipReleasedUnderEndpoint: guard.violations(),
    undeleted,
    finalPod: `${last.exitCode}/${lastDel.exitCode}`,
    endpoints: dump.endpoints.map((e) => e.Name),
    heldIps: heldIps(h, 'cbr0'),
    attachments: recordFiles(h, 'attachments').filter((n) => n.endsWith('.json')),
    // A process killed between writing a record's temp file and renaming it leaves the temp file: readers skip it
    // and the store removes it once it is STALE_TMP_MS old (src/state/store.ts). Only the killed service may.
    tempFiles: (['attachments', 'intents', 'tombstones'] as const).flatMap((k) =>
      recordFiles(h, k).filter((n) => n.endsWith('.tmp') && !n.includes(`.${killedPid}-`)),
    ),
    intents: recordFiles(h, 'intents').filter((n) => n.endsWith('.json')),
    quarantine: recordFiles(h, 'quarantine'),
    tombstonesKeepingIps,
  };
  const expected = {
    healthyFailures: [],
    ipReleasedUnderEndpoint: [],
    undeleted: [],
    finalPod: '0/0',
    endpoints: [],
    heldIps: {},
    attachments: [],
    tempFiles: [],
    intents: [],
    quarantine: [],
    tombstonesKeepingIps: [],
  };
  const exercised = {
    allLifecycles: stats.lifecycles === LIFECYCLES,
    serviceKilled: windows.some((w) => w.what === 'service kill -9'),
    hnsRestarted: (await h.sim.control.stats()).restarts === 1,
    moreHungThanPoolThreads: stats.maxAbandoned > POOL_THREADS,
    shimsKilled: stats.shimsKilled > 0,
    fellBack: bin.standaloneRuns() > 0,
    guardRan: guard.releases() >= LIFECYCLES / 2,
  };
  const ok = JSON.stringify(found) === JSON.stringify(expected) && Object.values(exercised).every((v) => v === true);
  if (!ok) {
    console.log(
      `service soak: ${JSON.stringify({ ...stats, ms: Date.now() - t0, releases: guard.releases(), standaloneRuns: bin.standaloneRuns(), windows, exercised, found })}`,
    );
  }
  expect(found).toEqual(expected);
  expect(exercised).toEqual({
    allLifecycles: true,
    serviceKilled: true,
    hnsRestarted: true,
    moreHungThanPoolThreads: true,
    shimsKilled: true,
    fellBack: true,
    guardRan: true,
  });
}, 600_000);

/**
 * Every HCN call runs on a call thread of the addon's own (native/addon/call_threads.h), outside libuv's thread
 * pool: 100 calls HNS never answers hold 100 threads and nothing else, and a call after them is answered. On the
 * pool (4 threads in this jest worker), the fifth call waited behind the hung ones and timed out.
 */
import { abandonedCalls } from '../../src/hns/abandoned-calls';
import { HR } from '../../src/hns/hresults';
import { Worker } from 'worker_threads';
import { until } from '../plugin/support';
import { ADDON_PATH, l2bridge, SIM_LIBRARY_PATH, useHcn } from '../hns/helpers';

const fx = useHcn();
const HUNG = 100;

test(`${HUNG} hung HcnEnumerateNetworks calls do not hold up a later call; each keeps one thread until HNS answers`, async () => {
  const { hcn, control } = fx;
  const net = await hcn.createNetwork(l2bridge('calls-threads'));
  await control.hang('HcnEnumerateNetworks', { count: HUNG });
  const before = (await control.stats()).calls.HcnEnumerateNetworks ?? 0;
  const hung = Array.from({ length: HUNG }, () => hcn.native.enumerateNetworks(null));

  // The answer, not ERROR_TIMEOUT: the HcnEnumerateEndpoints call found a thread of its own.
  const short = hcn.withTimeout(10_000);
  await expect(short.listEndpointsOfNetwork(net.ID!)).resolves.toEqual([]);
  // Every hung call reached HNS (was sent, on its own thread) and is still running there.
  await until(
    async () => ((await control.stats()).calls.HcnEnumerateNetworks ?? 0) - before >= HUNG || undefined,
    20_000,
    'every hung call to reach the simulator',
  );
  const during = hcn.native.callThreads();
  expect(during.busy).toBeGreaterThanOrEqual(HUNG);
  expect(during.pending).toBeGreaterThanOrEqual(HUNG);

  await control.release();
  const answers = await Promise.all(hung);
  // Each hung call got its own answer once let go (the one network).
  expect(answers.map((a) => (JSON.parse(a) as string[]).length)).toEqual(Array(HUNG).fill(1));
  expect(hcn.native.callThreads().pending).toBe(0);

  // Idle threads are reused: once they wait again, calls one after another start no thread.
  await until(() => (hcn.native.callThreads().busy === 0 ? true : undefined), 20_000, 'the threads to go idle');
  const started = hcn.native.callThreads().started;
  for (let i = 0; i < 20; i++) await hcn.getNetwork(net.ID!);
  expect(hcn.native.callThreads().started).toBe(started);
});

test('a call past its timeout is listed as abandoned until HNS answers it, then no longer', async () => {
  const { hcn, control } = fx;
  await control.hang('HcnEnumerateNamespaces');
  const short = hcn.withTimeout(300);
  await expect(short.listNamespaces()).rejects.toMatchObject({ hresult: HR.ERROR_TIMEOUT });
  const [call] = abandonedCalls();
  expect(abandonedCalls()).toHaveLength(1);
  expect(call).toMatchObject({ op: 'HcnEnumerateNamespaces', timeoutMs: 300 });
  await control.release();
  await until(() => (abandonedCalls().length === 0 ? true : undefined), 20_000, 'the abandoned call to end');
});

test('a worker_thread that ends while its call hangs: the call ends later and touches nothing of the worker', async () => {
  const { hcn, control } = fx;
  await control.hang('HcnEnumerateEndpoints');
  const before = (await control.stats()).calls.HcnEnumerateEndpoints ?? 0;
  const worker = new Worker(
    `const { parentPort, workerData } = require('worker_threads');
     const hcn = require(workerData.addon);
     hcn.init({ libraryPath: workerData.library });
     hcn.enumerateEndpoints(null);
     parentPort.postMessage('called');`,
    { eval: true, workerData: { addon: ADDON_PATH, library: SIM_LIBRARY_PATH } },
  );
  await new Promise((resolve) => worker.once('message', resolve));
  await until(
    async () => ((await control.stats()).calls.HcnEnumerateEndpoints ?? 0) > before || undefined,
    20_000,
    "the worker's call to reach the simulator",
  );
  await worker.terminate(); // its environment is torn down with the call still running
  await control.release();
  // The call's thread finished (its completion was dropped, the environment being gone) and the process lives on.
  await until(() => (hcn.native.callThreads().busy === 0 ? true : undefined), 20_000, 'the call to end');
  await expect(hcn.listNetworks()).resolves.toEqual([]);
});

/**
 * Every HCN call runs on a call thread of the addon's own (native/addon/call_threads.h), outside libuv's thread
 * pool: 100 calls HNS never answers hold 100 threads and nothing else, and a call after them is answered. On the
 * pool (4 threads in this jest worker), the fifth call waited behind the hung ones and timed out.
 */
import { abandonedCalls } from '../../src/hns/abandoned-calls';
import { HR } from '../../src/hns/hresults';
import { until } from '../plugin/support';
import { l2bridge, useHcn } from '../hns/helpers';

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

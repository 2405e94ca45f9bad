/**
 * The service's Windows listener, on Linux: a pipe address goes to the addon's pipe server (listenPipe), never to
 * net.Server, with SYSTEM and Administrators as the allowed SIDs unless a test narrows them; the server's refusals
 * count and are logged; close() stops it. The pipe server itself (DACL, token check, first instance) runs only on
 * Windows: test/windows/service.test.ts under wine. Here the Linux addon must refuse to make one.
 */
import type { NativeHcn, PipeServerEvent } from '../../src/hns/native-types';
import type { Logger } from '../../src/log/logger';
import { listenExclusive } from '../../src/service/transport/listeners';
import { startService } from '../../src/service/service';
import * as net from 'net';
import { loadAddon } from '../native/helpers/addon';

const PIPE = '\\\\.\\pipe\\hcn-cni-unit';

function recorder(): Logger & { lines: Array<{ level: string; obj: object; msg?: string }> } {
  const lines: Array<{ level: string; obj: object; msg?: string }> = [];
  const log = {
    lines,
    trace: () => undefined,
    debug: () => undefined,
    info: (obj: object, msg?: string) => lines.push({ level: 'info', obj, ...(msg ? { msg } : {}) }),
    warn: (obj: object, msg?: string) => lines.push({ level: 'warn', obj, ...(msg ? { msg } : {}) }),
    error: (obj: object, msg?: string) => lines.push({ level: 'error', obj, ...(msg ? { msg } : {}) }),
    child: () => log,
  };
  return log;
}

function fakeNative(): {
  native: NativeHcn;
  calls: Array<{ name: string; sids: readonly string[] }>;
  emit(e: PipeServerEvent): void;
  closed(): number;
} {
  const calls: Array<{ name: string; sids: readonly string[] }> = [];
  let onEvent: ((e: PipeServerEvent) => void) | undefined;
  let closes = 0;
  const native = {
    capabilities: () => ({}),
    listenPipe: (name: string, sids: readonly string[], cb: (e: PipeServerEvent) => void) => {
      calls.push({ name, sids });
      onEvent = cb;
      return { dacl: 'D:P(A;;GA;;;SY)(A;;GA;;;BA)', close: () => void closes++ };
    },
  } as unknown as NativeHcn;
  return { native, calls, emit: (e) => onEvent!(e), closed: () => closes };
}

test('a pipe address is served by the addon with SYSTEM and Administrators; refusals count and are logged', async () => {
  const fake = fakeNative();
  const log = recorder();
  const service = await startService({ address: PIPE, platform: 'win32', pid: process.pid, native: fake.native, log });
  expect(fake.calls).toEqual([{ name: PIPE, sids: ['S-1-5-18', 'S-1-5-32-544'] }]);
  expect(log.lines).toContainEqual({
    level: 'info',
    obj: expect.objectContaining({ address: PIPE, dacl: 'D:P(A;;GA;;;SY)(A;;GA;;;BA)' }),
    msg: 'service: listening',
  });

  fake.emit({ type: 'refused', reason: 'none of the allowed SIDs', pid: 42, user: 'S-1-5-21-1-2-3-1001' });
  expect(service.status()).toMatchObject({ refused: 1, served: 0 });
  expect(log.lines).toContainEqual({
    level: 'warn',
    obj: { address: PIPE, reason: 'none of the allowed SIDs', pid: 42, user: 'S-1-5-21-1-2-3-1001' },
    msg: 'service: refused a connection (nothing was read)',
  });
  fake.emit({ type: 'error', message: 'ConnectNamedPipe: Win32 error 5' });
  expect(log.lines).toContainEqual({
    level: 'error',
    obj: { address: PIPE, err: 'ConnectNamedPipe: Win32 error 5' },
    msg: 'service: pipe server',
  });

  await service.close();
  expect(fake.closed()).toBe(1);
});

test('only startService narrows the allowed SIDs (tests do, to see a refusal under wine)', async () => {
  const fake = fakeNative();
  const service = await startService({
    address: PIPE,
    platform: 'win32',
    pid: process.pid,
    native: fake.native,
    log: recorder(),
    allowSids: ['S-1-5-18'],
  });
  expect(fake.calls).toEqual([{ name: PIPE, sids: ['S-1-5-18'] }]);
  await service.close();
});

test('the Linux addon has no pipe server, and net.Server is never used for a pipe name', async () => {
  expect(() => loadAddon().listenPipe(PIPE, ['S-1-5-18'], () => undefined)).toThrow(
    'listenPipe: named pipes exist only on Windows',
  );
  await expect(listenExclusive(net.createServer(), PIPE, 0o600)).rejects.toThrow('is a pipe (listenPipe)');
});

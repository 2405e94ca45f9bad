/**
 * One request line, one response line, one connection: the transport both protocol clients share
 * (docs/sim-protocol.md, "Transport"). They never ask to keep the connection: they drive the simulator from tests and
 * scripts, where a call's connection cost does not matter.
 */
import * as net from 'node:net';
import { netOptions, parseAddress } from './address';

export class LineError extends Error {
  override readonly name = 'LineError';
  /** connect: no connection; broken: the connection ended before a full response line; bad-response: not JSON. */
  constructor(
    readonly stage: 'connect' | 'broken' | 'bad-response',
    message: string,
  ) {
    super(message);
  }
}

export function requestLine(address: string, payload: unknown, timeoutMs?: number): Promise<unknown> {
  let target: ReturnType<typeof netOptions>;
  try {
    target = netOptions(parseAddress(address));
  } catch (e) {
    return Promise.reject(new LineError('connect', (e as Error).message));
  }
  return new Promise((resolve, reject) => {
    const socket = net.connect(target);
    const chunks: Buffer[] = [];
    let connected = false;
    let done = false;
    const finish = (err: Error | undefined, value?: unknown) => {
      if (done) return;
      done = true;
      socket.destroy();
      if (err) reject(err);
      else resolve(value);
    };
    if (timeoutMs !== undefined)
      socket.setTimeout(timeoutMs, () =>
        finish(new LineError('broken', `no response from ${address} within ${timeoutMs} ms`)),
      );
    socket.on('connect', () => {
      connected = true;
      socket.write(JSON.stringify(payload) + '\n');
    });
    socket.on('data', (chunk: Buffer) => {
      const nl = chunk.indexOf(0x0a);
      if (nl < 0) {
        chunks.push(chunk);
        return;
      }
      chunks.push(chunk.subarray(0, nl));
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        finish(undefined, JSON.parse(text));
      } catch {
        finish(new LineError('bad-response', `response from ${address} is not JSON: ${text.slice(0, 200)}`));
      }
    });
    socket.on('error', (e) => finish(new LineError(connected ? 'broken' : 'connect', `${address}: ${e.message}`)));
    socket.on('close', () =>
      finish(new LineError(connected ? 'broken' : 'connect', `${address}: connection closed before a response`)),
    );
  });
}

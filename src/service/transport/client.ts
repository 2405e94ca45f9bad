/**
 * A client of the service in TypeScript: the ops CLI's `hcn-cni service` (KIND_STATUS) and tests. The runtime's
 * client is the native shim (native/shim), which speaks the same protocol.
 */
import * as net from 'net';
import { encodeRequest, KIND_STATUS, parseReply, type Reply } from './protocol';
import type { ServiceStatus } from '../observability/status';

export function defaultServiceAddress(platform: NodeJS.Platform): string {
  return platform === 'win32' ? '\\\\.\\pipe\\hcn-cni' : '/run/hcn-cni/service.sock';
}

/** Sends one request and reads the whole reply; rejects if the service is absent or closes without a full reply. */
export function sendRequest(address: string, request: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(address);
    const chunks: Buffer[] = [];
    socket.on('connect', () => socket.write(request));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const reply = parseReply(Buffer.concat(chunks));
      if (reply) resolve(reply);
      else reject(new Error(`the hcn-cni service at ${address} closed the connection without a complete reply`));
    });
  });
}

export async function queryStatus(address: string): Promise<ServiceStatus> {
  const reply = await sendRequest(address, encodeRequest(KIND_STATUS, {}, Buffer.alloc(0)));
  if (reply.type === 'refused')
    throw new Error(`the hcn-cni service at ${address} speaks protocol version ${reply.version}`);
  return JSON.parse(reply.stdout) as ServiceStatus;
}

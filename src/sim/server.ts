/**
 * The simulator's socket server (docs/sim-protocol.md): one connection per call, one JSON request line in, one
 * JSON response line out. Op requests go to the engine, control requests (`ctl`) to the control handler; both on
 * the same address. A client that goes away after sending its line does not cancel its call (engine.ts, rule 1).
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import { HR } from '../hns/hresults';
import { formatAddress, netOptions, parseAddress, type SimAddress } from './address';
import { handleControl } from './control-handler';
import type { Engine } from './engine';
import { silentLogger, type Logger } from '../log/logger';
import { errorRecord } from './sim-error';
import type { ControlResponse, OpRequest, OpResponse } from './wire-types';

const MAX_LINE = 64 * 1024 * 1024;

export class SimServer {
  private server?: net.Server;
  private address?: SimAddress;
  private readonly sockets = new Set<net.Socket>();
  /** Called once a `shutdown` control request has been answered. */
  onShutdown: () => void = () => undefined;

  constructor(
    private readonly engine: Engine,
    private readonly logger: Logger = silentLogger,
  ) {}

  /** Listens on the address; resolves to the actual address (the port picked for tcp:…:0). */
  async listen(text: string): Promise<string> {
    const address = parseAddress(text);
    if (address.kind === 'unix') await removeStaleSocket(address.path);
    // allowHalfOpen: a client that shuts down its sending side after the request line still gets its answer.
    const server = net.createServer({ allowHalfOpen: true }, (socket) => this.onConnection(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(netOptions(address), () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (e) => this.logger.error({ err: e.message }, 'server error'));
    this.server = server;
    if (address.kind === 'tcp') address.port = (server.address() as net.AddressInfo).port;
    this.address = address;
    return formatAddress(address);
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (this.address?.kind === 'unix') fs.rmSync(this.address.path, { force: true });
  }

  private onConnection(socket: net.Socket): void {
    this.sockets.add(socket);
    const chunks: Buffer[] = [];
    let size = 0;
    let handled = false;
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', (e) => this.logger.debug({ err: e.message }, 'client connection error'));
    const handle = (line: Buffer) => {
      handled = true; // later bytes are read and ignored, so the client's FIN still arrives
      const text = line.toString('utf8');
      void this.handleLine(text, socket.remotePort).then((response) => {
        const shutdown = isShutdown(text) && 'ok' in response && response.ok;
        // Stop only once the answer is out, so the caller sees ok before the service goes away.
        const after = () => (shutdown ? this.onShutdown() : undefined);
        if (!socket.destroyed && socket.writable) socket.end(JSON.stringify(response) + '\n', after);
        else after();
      });
    };
    socket.on('data', (chunk: Buffer) => {
      if (handled) return;
      const nl = chunk.indexOf(0x0a);
      if (nl >= 0) {
        chunks.push(chunk.subarray(0, nl));
        handle(Buffer.concat(chunks));
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
      if (size > MAX_LINE) {
        handled = true;
        socket.end(JSON.stringify(this.badRequest('request line longer than 64 MiB')) + '\n');
      }
    });
    // A last line without its newline is still a request; a connection that sent nothing is just closed.
    socket.on('end', () => {
      if (handled) return;
      if (chunks.some((c) => c.length > 0)) handle(Buffer.concat(chunks));
      else socket.end();
    });
  }

  private async handleLine(line: string, tcpPort?: number): Promise<OpResponse | ControlResponse> {
    let req: unknown;
    try {
      req = JSON.parse(line);
    } catch {
      return this.badRequest('request is not JSON');
    }
    if (typeof req !== 'object' || req === null || Array.isArray(req))
      return this.badRequest('request is not a JSON object');
    const r = req as Record<string, unknown>;
    if (r.v !== undefined && r.v !== 1) return this.badRequest(`protocol version ${String(r.v)} is not 1`);
    if (typeof r.ctl === 'string') return this.handleControl(r.ctl, r.args);
    if (typeof r.op !== 'string') return this.badRequest('request has neither op nor ctl');
    return this.engine.submit(r as unknown as OpRequest, tcpPort);
  }

  /** A line the service cannot read is answered as HNS answers a bad argument. */
  private badRequest(why: string): OpResponse {
    this.logger.debug({ why }, 'bad request line');
    return { hr: HR.E_INVALIDARG, result: null, errorRecord: errorRecord(HR.E_INVALIDARG) };
  }

  private async handleControl(ctl: string, args: unknown): Promise<ControlResponse> {
    if (ctl === 'shutdown') return { ok: true };
    try {
      const result = await handleControl(this.engine, ctl, (args ?? {}) as Record<string, unknown>);
      return result === undefined ? { ok: true } : { ok: true, result };
    } catch (e) {
      this.logger.debug({ ctl, err: (e as Error).message }, 'control request failed');
      return { ok: false, error: (e as Error).message };
    }
  }
}

function isShutdown(line: string): boolean {
  try {
    return (JSON.parse(line) as { ctl?: unknown }).ctl === 'shutdown';
  } catch {
    return false;
  }
}

/** A socket file left by a dead simulator is removed; one a live simulator answers on is an error. */
async function removeStaleSocket(file: string): Promise<void> {
  if (!fs.existsSync(file)) return;
  const alive = await new Promise<boolean>((resolve) => {
    const s = net.connect({ path: file });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
  if (alive) throw new Error(`${file} is in use by a running service`);
  fs.rmSync(file, { force: true });
}

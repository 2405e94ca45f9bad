/**
 * The simulator's socket server (docs/sim-protocol.md): one JSON request line in, one JSON response line out; a
 * connection carries one call, or a series of them one after another when the client asks to keep it. Op requests go to the engine, control requests (`ctl`) to the control handler; both on
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

/** One connection's reading state (SimServer.onConnection). */
interface LineState {
  /** Bytes read and not yet answered: the next line, or its beginning. */
  pending: Buffer[];
  size: number;
  /** A line is being answered: later bytes wait in `pending`. */
  busy: boolean;
  /** Answered without keep (or refused): later bytes are read and ignored, so the FIN arrives. */
  done: boolean;
  clientEnded: boolean;
  /** A service-callback registration: carries notifications until either side ends it. */
  streaming: boolean;
}

/** What a request line gets: its response, and what becomes of the connection after it. */
interface LineOutcome {
  response: OpResponse | ControlResponse;
  keep: boolean;
  shutdown: boolean;
  /** A service-callback registration: the connection carries its notifications from now on. */
  stream?: boolean;
}

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

  /**
   * One request line at a time. A request with `"keep": true` is answered with `"keep": true` and the connection stays
   * open for the client's next line (docs/sim-protocol.md, "Kept connections"); any other request is answered and the
   * connection ended, as before. Either way the call is the engine's once its line is read: a client that goes away
   * does not cancel it (engine.ts rule 1). Kept connections are a transport choice of this protocol, not something
   * HNS does: they save the simulator an accept and a teardown per call and change nothing a caller can observe.
   */
  private onConnection(socket: net.Socket): void {
    this.sockets.add(socket);
    const c: LineState = { pending: [], size: 0, busy: false, done: false, clientEnded: false, streaming: false };
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', (e) => this.logger.debug({ err: e.message }, 'client connection error'));
    const answer = (line: Buffer) => {
      c.busy = true;
      void this.handleLine(line.toString('utf8'), socket).then((outcome) => {
        c.busy = false;
        if (this.reply(socket, c, outcome)) next();
      });
    };
    // Takes the next complete line out of `pending`, if any.
    const next = () => {
      if (c.busy || c.done) return;
      const all = c.pending.length === 1 ? c.pending[0]! : Buffer.concat(c.pending);
      const nl = all.indexOf(0x0a);
      if (nl < 0) {
        c.pending = all.length > 0 ? [all] : [];
        if (c.size > MAX_LINE) {
          c.done = true;
          socket.end(JSON.stringify(this.badRequest('request line longer than 64 MiB')) + '\n');
        } else if (c.clientEnded) {
          // A last line without its newline is still a request; a connection that sent nothing more is just closed.
          if (all.length > 0) answer(all);
          else socket.end();
          c.pending = [];
          c.size = 0;
        }
        return;
      }
      const rest = all.subarray(nl + 1);
      c.pending = rest.length > 0 ? [rest] : [];
      c.size = rest.length;
      answer(all.subarray(0, nl));
    };
    socket.on('data', (chunk: Buffer) => {
      if (c.done) return;
      c.pending.push(chunk);
      c.size += chunk.length;
      next();
    });
    socket.on('end', () => {
      c.clientEnded = true;
      // A client that shuts its side of a registration has unregistered: the service ends the connection, so the
      // client's reader sees the end of it even where shutting down its own socket does not wake a thread blocked
      // receiving on it (Winsock under wine).
      if (c.streaming) socket.end();
      else next();
    });
  }

  /** Writes a line's answer; true when the connection is kept for the client's next line. */
  private reply(socket: net.Socket, c: LineState, { response, keep, shutdown, stream }: LineOutcome): boolean {
    // Stop only once the answer is out, so the caller sees ok before the service goes away.
    const after = () => (shutdown ? this.onShutdown() : undefined);
    if (socket.destroyed || !socket.writable) {
      after();
      return false;
    }
    if (stream) {
      // A service-callback registration: the connection now carries its notifications (and no more requests).
      c.done = true;
      c.streaming = true;
      if (c.clientEnded) socket.end(JSON.stringify(response) + '\n');
      else socket.write(JSON.stringify(response) + '\n');
      return false;
    }
    const kept = keep && !shutdown && !c.clientEnded;
    const text = JSON.stringify(kept ? { ...response, keep: true } : response) + '\n';
    if (!kept) {
      c.done = true;
      socket.end(text, after);
      return false;
    }
    socket.write(text);
    return true;
  }

  private async handleLine(line: string, socket: net.Socket): Promise<LineOutcome> {
    let req: unknown;
    try {
      req = JSON.parse(line);
    } catch {
      return { response: this.badRequest('request is not JSON'), keep: false, shutdown: false };
    }
    if (typeof req !== 'object' || req === null || Array.isArray(req))
      return { response: this.badRequest('request is not a JSON object'), keep: false, shutdown: false };
    const r = req as Record<string, unknown>;
    const keep = r.keep === true;
    if (r.v !== undefined && r.v !== 1)
      return { response: this.badRequest(`protocol version ${String(r.v)} is not 1`), keep, shutdown: false };
    if (typeof r.ctl === 'string') {
      const response = await this.handleControl(r.ctl, r.args);
      return { response, keep, shutdown: r.ctl === 'shutdown' && 'ok' in response && response.ok };
    }
    if (typeof r.op !== 'string')
      return { response: this.badRequest('request has neither op nor ctl'), keep, shutdown: false };
    if (r.op === 'HcnRegisterServiceCallback') {
      // Each notification is the registration's last line: the service disconnected (service-callbacks.ts).
      const { response, unregister } = this.engine.registerServiceCallback((n) => {
        if (!socket.destroyed) socket.end(JSON.stringify(n) + '\n');
      });
      if (unregister) socket.once('close', unregister);
      return { response, keep: false, shutdown: false, stream: unregister !== undefined };
    }
    const response = await this.engine.submit(r as unknown as OpRequest, socket.remotePort);
    return { response: { ...response, boot: this.engine.boot }, keep, shutdown: false };
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

/**
 * A stand-in for the hcn-sim service that speaks its line protocol (docs/sim-protocol.md) with canned answers and
 * records every request, so the native client library can be tested without the real simulator.
 *
 *   const sim = await FakeSimServer.start();
 *   sim.reply('HcnEnumerateNetworks', { result: '[]' });
 *   process.env.HCN_SIM = sim.address;   // needs test/native/helpers/native-environment.js (real getenv)
 */
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';

/** One request line as the client sent it. */
export interface SimRequest {
  v: number;
  pid: number;
  winpid: number;
  op: string;
  [field: string]: unknown;
}

/** A protocol response; omitted fields default to hr 0, result null, errorRecord null. */
export interface SimAnswer {
  hr?: number;
  result?: string | null;
  errorRecord?: string | null;
}

/** Misbehaviour: `raw` is written verbatim and the connection then closed; `drop` closes without a byte. */
export type FakeReply = SimAnswer | { raw: string } | { drop: true };

export type ReplyFn = (request: SimRequest) => FakeReply | Promise<FakeReply>;

export interface FakeSimOptions {
  /** Listen on tcp:127.0.0.1:<ephemeral> instead of a unix socket (the Windows client speaks tcp only). */
  tcp?: boolean;
  /**
   * Honour `"keep": true` as hcn-sim does (docs/sim-protocol.md, "Kept connections"): answer with `"keep": true` and
   * read the next line on the same connection. Without it the fake answers and closes, as a simulator before kept
   * connections did.
   */
  keep?: boolean;
}

export const E_NOTIMPL = 0x80004001;

/** An HNS-style error record, as the service would put in `errorRecord`. */
export function errorRecord(hr: number, message: string): string {
  return JSON.stringify({ Success: false, Error: message, ErrorCode: hr >>> 0 });
}

export class FakeSimServer {
  /** Requests in arrival order. */
  readonly requests: SimRequest[] = [];
  /** The exact lines received, for checks on escaping. */
  readonly lines: string[] = [];
  /** Called for ops without a canned reply; the default answers E_NOTIMPL with an error record. */
  fallback: ReplyFn = (request) => ({
    hr: E_NOTIMPL,
    errorRecord: errorRecord(E_NOTIMPL, `fake sim: no reply for ${request.op}`),
  });

  /** Connections accepted so far. */
  connections = 0;

  private readonly replies = new Map<string, ReplyFn>();
  private readonly sockets = new Set<net.Socket>();
  /** Kept connections waiting for their next line. */
  private readonly idle = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    readonly address: string,
    private readonly dir: string | null,
    private readonly keep: boolean,
  ) {}

  static async start(options: FakeSimOptions = {}): Promise<FakeSimServer> {
    const server = net.createServer();
    let address: string;
    let dir: string | null = null;
    if (options.tcp) {
      await listen(server, { host: '127.0.0.1', port: 0 });
      address = `tcp:127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    } else {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-fake-sim-'));
      const socketPath = path.join(dir, 'sim.sock');
      await listen(server, { path: socketPath });
      address = `unix:${socketPath}`;
    }
    const fake = new FakeSimServer(server, address, dir, options.keep ?? false);
    server.on('connection', (socket) => fake.serve(socket));
    return fake;
  }

  /** Answers every request for `op` with `reply` (or what `reply(request)` returns), replacing an earlier one. */
  reply(op: string, reply: FakeReply | ReplyFn): this {
    this.replies.set(op, typeof reply === 'function' ? reply : () => reply);
    return this;
  }

  /** Forgets canned replies and recorded requests. */
  reset(): void {
    this.replies.clear();
    this.requests.length = 0;
    this.lines.length = 0;
  }

  /** Closes every kept connection that is waiting for a line, as a simulator that stops or restarts does. */
  async dropIdle(): Promise<number> {
    const closing = [...this.idle];
    this.idle.clear();
    await Promise.all(
      closing.map((socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()).destroy())),
    );
    return closing.length;
  }

  /** The ops received so far, in order. */
  ops(): string[] {
    return this.requests.map((r) => r.op);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private serve(socket: net.Socket): void {
    this.connections++;
    this.sockets.add(socket);
    socket.on('close', () => {
      this.sockets.delete(socket);
      this.idle.delete(socket);
    });
    socket.on('error', () => undefined);
    let buffer = '';
    let busy = false;
    socket.setEncoding('utf8');
    const next = () => {
      const newline = buffer.indexOf('\n');
      if (busy || newline < 0) return;
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      busy = true;
      this.idle.delete(socket);
      void this.answer(socket, line).then((kept) => {
        busy = false;
        if (!kept) return;
        this.idle.add(socket);
        next();
      });
    };
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      next();
    });
  }

  /** Answers one line; true when the connection stays open for the next one. */
  private async answer(socket: net.Socket, line: string): Promise<boolean> {
    this.lines.push(line);
    let request: SimRequest;
    try {
      request = JSON.parse(line) as SimRequest;
    } catch {
      socket.destroy();
      return false;
    }
    this.requests.push(request);
    const reply = await (this.replies.get(request.op) ?? this.fallback)(request);
    if ('drop' in reply) {
      socket.destroy();
      return false;
    }
    if ('raw' in reply) {
      socket.end(reply.raw);
      return false;
    }
    const keep = this.keep && request.keep === true;
    const answer = { hr: reply.hr ?? 0, result: reply.result ?? null, errorRecord: reply.errorRecord ?? null };
    const text = JSON.stringify(keep ? { ...answer, keep: true } : answer) + '\n';
    if (keep) socket.write(text);
    else socket.end(text);
    return keep;
  }
}

function listen(server: net.Server, options: net.ListenOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

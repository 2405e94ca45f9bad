/**
 * The service's request intake: the peer check, the bounds on connections that have not sent their whole request
 * (time, how many), reading and checking the request, accepting it (from then on it is the service's: a shim that
 * dies does not cancel it), and running it — a verb of one attachment in that attachment's turn of the queue.
 */
import type * as net from 'net';
import type { NativeHcn } from '../../hns/native-types';
import type { Logger } from '../../log/logger';
import type { PluginDeps } from '../../plugin/deps';
import type { ServedConfigs } from '../served-configs';
import { runCni } from '../../run';
import { CniCode } from '../../cni/cni-error';
import { isPlainObject } from '../../cni/fields';
import { parseJsonText } from '../../cni/json-text';
import {
  encodeAccept,
  encodeResult,
  encodeVersionRefusal,
  KIND_CNI,
  KIND_HAND_OVER,
  KIND_STATUS,
  PROTOCOL_VERSION,
  ProtocolError,
  RequestReader,
  type Request,
} from './protocol';
import type { KeyedQueue } from './queue';
import type { RequestLogs } from '../observability/request-log';
import type { Entry, RequestBook } from './request-book';
import type { ServiceStatus } from '../observability/status';
import { codeLabel, verbLabel, type MetricsSink } from '../observability/tally';

export interface IntakeOptions {
  address: string;
  platform: NodeJS.Platform;
  /** The only uid allowed to connect (Linux); undefined: no uid check. */
  allowUid?: number;
  requestTimeoutMs: number;
  maxPending: number;
  defaults?: { stateDir?: string; logFile?: string };
  native: NativeHcn;
  log: Logger;
  /** The plugin's dependencies, made once for every request (src/plugin/deps.ts). */
  deps: PluginDeps;
  /** Told of every verb's configuration (src/service/served-configs.ts). */
  served: ServedConfigs;
  queue: KeyedQueue;
  logs: RequestLogs;
  book: RequestBook;
  counts: MetricsSink;
  status: () => ServiceStatus;
  /** A new service asks to take the address over (hand-over.ts); its peer was checked like any client's. */
  onHandOver(socket: net.Socket, env: Record<string, string>): void;
}

type Output = { stdout: string; exitCode: number; stderr: string };

/** What the shim prints if this service ends after accepting and before answering: "try again later". */
function ifServiceDies(req: Request): string {
  let cniVersion = '1.1.0';
  try {
    const raw: unknown = parseJsonText(req.stdin.toString('utf8'));
    if (isPlainObject(raw) && typeof raw.cniVersion === 'string') cniVersion = raw.cniVersion;
  } catch {
    // not JSON: the plugin would have said so; the default version is fine for a transport failure
  }
  const msg = `the hcn-cni service ended before it finished ${req.env.CNI_COMMAND ?? 'the request'}; try again`;
  return `${JSON.stringify({ cniVersion, code: CniCode.TRY_AGAIN_LATER, msg })}\n`;
}

/**
 * Ends `socket` with `data`; resolves once the data is written out, or the socket is gone. A drain waits for this, not
 * for the end() call: the process ends at once after a drain (src/cli/hcn-cni.ts exit), and on Windows libuv writes
 * a pipe asynchronously — a result still being written would be cut off, and its shim would print "try again".
 */
function endWritten(socket: net.Socket, data: Buffer): Promise<void> {
  return new Promise((resolve) => {
    socket.once('close', () => resolve());
    socket.end(data, () => resolve());
  });
}

export class RequestIntake {
  private lastBusyWarning = 0;

  constructor(private readonly o: IntakeOptions) {}

  /** A new connection (paused, nothing read yet). */
  readonly onConnection = (socket: net.Socket): void => {
    if (!this.peerAllowed(socket)) {
      this.o.book.counts.refused++;
      this.o.log.warn(
        { address: this.o.address },
        'service: refused a connection from another user (nothing was read)',
      );
      socket.destroy();
      return;
    }
    socket.on('error', () => undefined); // a shim that vanishes is normal; its request (if accepted) carries on
    if (this.o.book.pendingConnections >= this.o.maxPending) return this.tooMany(socket);
    this.read(socket);
  };

  /** The peer check: true if this connection may talk to us. Runs before anything is read from it. */
  private peerAllowed(socket: net.Socket): boolean {
    if (this.o.allowUid === undefined) return true;
    const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) return false;
    try {
      return this.o.native.peerCredentials(fd).uid === this.o.allowUid;
    } catch (e) {
      this.o.log.error({ err: (e as Error).message }, 'service: peer check failed; refusing the connection');
      return false;
    }
  }

  private tooMany(socket: net.Socket): void {
    this.o.book.counts.tooMany++;
    if (Date.now() - this.lastBusyWarning > 1000) {
      this.lastBusyWarning = Date.now();
      this.o.log.warn(
        { pending: this.o.book.pendingConnections },
        'service: too many connections with incomplete requests; closing new ones',
      );
    }
    socket.destroy();
  }

  /** Reads the request within requestTimeoutMs; a malformed one is refused, one of another protocol answered so. */
  private read(socket: net.Socket): void {
    const book = this.o.book;
    const readDone = book.reading();
    const reader = new RequestReader();
    let accepted = false;
    const settle = (): void => {
      if (accepted) return;
      accepted = true;
      clearTimeout(timer);
      socket.off('data', onData);
      readDone();
    };
    const timer = setTimeout(() => {
      settle();
      book.counts.timedOut++;
      socket.destroy();
    }, this.o.requestTimeoutMs);
    socket.once('close', settle);
    const onData = (chunk: Buffer): void => {
      if (accepted) return; // nothing more is expected from the shim
      let req: Request | undefined;
      try {
        req = reader.push(chunk);
      } catch (e) {
        if (!(e instanceof ProtocolError)) throw e;
        settle();
        book.counts.refused++;
        socket.destroy();
        return;
      }
      if (!req) return;
      settle();
      this.dispatch(socket, req);
    };
    socket.on('data', onData);
    socket.resume();
  }

  /** A whole request: a hand-over goes to the desk, another protocol's is answered so, the rest accepted. */
  private dispatch(socket: net.Socket, req: Request): void {
    if (req.version === PROTOCOL_VERSION && req.kind === KIND_HAND_OVER) {
      this.o.onHandOver(socket, req.env);
      return;
    }
    if (req.version !== PROTOCOL_VERSION || (req.kind !== KIND_CNI && req.kind !== KIND_STATUS)) {
      socket.end(encodeVersionRefusal());
      return;
    }
    this.accept(socket, req);
  }

  private accept(socket: net.Socket, req: Request): void {
    const { book, log } = this.o;
    const entry: Entry = {
      id: book.newId(),
      verb: req.kind === KIND_STATUS ? 'service-status' : (req.env.CNI_COMMAND ?? ''),
      ...(req.env.CNI_CONTAINERID ? { containerId: req.env.CNI_CONTAINERID } : {}),
      ...(req.env.CNI_IFNAME ? { ifname: req.env.CNI_IFNAME } : {}),
      state: 'queued',
      since: Date.now(),
      shimConnected: true,
    };
    if (req.kind === KIND_CNI) book.entries.set(entry.id, entry);
    socket.once('close', () => {
      entry.shimConnected = false;
    });
    socket.write(encodeAccept(ifServiceDies(req)));
    const done = this.run(req, entry)
      .then(
        (out): Buffer | undefined => {
          if (req.kind === KIND_CNI) book.counts.served++;
          return encodeResult(out.exitCode, out.stdout, out.stderr);
        },
        (e: unknown) => {
          // runCni never throws (dispatch turns every failure into error JSON); this is a bug in the service.
          book.counts.failed++;
          log.error({ err: (e as Error)?.stack ?? String(e) }, 'service: request failed');
          socket.destroy();
          return undefined;
        },
      )
      .finally(() => {
        book.entries.delete(entry.id);
      })
      .then((result) => (result && !socket.destroyed ? endWritten(socket, result) : undefined));
    book.track(done);
  }

  /** STATUS at once; a verb of one attachment in its turn of the queue, any other verb at once. */
  private async run(req: Request, entry: Entry): Promise<Output> {
    if (req.kind === KIND_STATUS) return { stdout: `${JSON.stringify(this.o.status())}\n`, exitCode: 0, stderr: '' };
    const work = (): Promise<Output> => this.runVerb(req, entry);
    const verb = req.env.CNI_COMMAND;
    if ((verb === 'ADD' || verb === 'DEL' || verb === 'CHECK') && req.env.CNI_CONTAINERID && req.env.CNI_IFNAME) {
      return this.o.queue.run(`${req.env.CNI_CONTAINERID}\0${req.env.CNI_IFNAME}`, work);
    }
    return work();
  }

  private async runVerb(req: Request, entry: Entry): Promise<Output> {
    // Queued behind the same pod's earlier verb, and its shim has gone since (the runtime's timeout killed it):
    // nothing has been done for it, so not running it leaves the runtime's retry or DEL exactly right. Once a verb
    // has started it finishes and commits, whoever is still listening (the header).
    if (!entry.shimConnected) {
      this.o.book.counts.notRun++;
      this.o.log.info(
        { verb: entry.verb, containerId: entry.containerId, ifname: entry.ifname },
        'service: the shim left before its queued request started; not running it',
      );
      return { stdout: '', exitCode: 0, stderr: '' };
    }
    entry.state = 'running';
    const sink: string[] = [];
    const t0 = performance.now();
    const out = await runCni({
      env: req.env,
      stdin: req.stdin,
      platform: this.o.platform,
      deps: this.o.deps,
      onServed: this.o.served.served,
      createLogger: (o) => this.o.logs.create(o, sink),
      ...(this.o.defaults ? { defaults: this.o.defaults } : {}),
    });
    const seconds = (performance.now() - t0) / 1000;
    this.o.counts.verb(verbLabel(req.env.CNI_COMMAND), codeLabel(out.exitCode, out.stdout), seconds);
    return { ...out, stderr: sink.join('') };
  }
}

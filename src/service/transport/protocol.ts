/**
 * The service wire protocol (docs/service-protocol.md), the TypeScript side of native/shim/shim_protocol.h.
 * Little-endian u32 fields; the request carries the CNI environment and stdin as bytes, nothing is parsed here.
 *
 *   request   HCNQ | version | kind | envBytes | stdinBytes | env ("KEY=VALUE\0"…) | stdin
 *   accepted  HCNA | version | n | n bytes: the stdout the shim prints if the service ends before answering
 *   result    HCNR | exit code | stdoutBytes | stderrBytes | stdout | stderr
 *   refused   HCNV | version   (the service speaks another version; the shim runs the standalone executable)
 *
 * A hand-over (hand-over.ts) is a request of KIND_HAND_OVER from a new service to the one serving, then:
 *   released  HCNH | version   old → new: the address lock is released, take the address
 *   taken     HCNT | version   new → old: the address names the new service's socket now; stop accepting
 * A service of a version without hand-overs answers the request HCNV, as for any kind it does not know.
 */
import { MAX_STDIN_BYTES } from '../../cni/dispatch';

export const PROTOCOL_VERSION = 1;
export const KIND_CNI = 1;
/** The service's own state and in-flight work, for `hcn-cni service` (stdout of the result is JSON). */
export const KIND_STATUS = 2;
/** A new service asking the one serving to hand the address over (hand-over.ts). */
export const KIND_HAND_OVER = 3;

const MAGIC = {
  request: 'HCNQ',
  accept: 'HCNA',
  version: 'HCNV',
  result: 'HCNR',
  released: 'HCNH',
  taken: 'HCNT',
} as const;
const HEADER = 20;
/** The environment of a CNI invocation is a few KiB; more is not a runtime talking. */
export const MAX_ENV_BYTES = 1024 * 1024;

export interface Request {
  version: number;
  kind: number;
  env: Record<string, string>;
  stdin: Buffer;
}

export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
}

/**
 * Reads one request from the bytes received so far: undefined while incomplete; a request whose version is not
 * ours comes back with only `version` and `kind` read (the caller answers HCNV); throws ProtocolError on garbage.
 */
export function parseRequest(buf: Buffer): Request | undefined {
  if (buf.length >= 4 && buf.subarray(0, 4).toString('latin1') !== MAGIC.request) {
    throw new ProtocolError('not a hcn-cni service request');
  }
  if (buf.length < 8) return undefined;
  const version = buf.readUInt32LE(4);
  if (version !== PROTOCOL_VERSION) return { version, kind: 0, env: {}, stdin: Buffer.alloc(0) };
  if (buf.length < HEADER) return undefined;
  const kind = buf.readUInt32LE(8);
  const envBytes = buf.readUInt32LE(12);
  const stdinBytes = buf.readUInt32LE(16);
  // The shim reads at most one byte past the CNI limit, so the plugin can refuse an oversized stdin with code 6.
  if (envBytes > MAX_ENV_BYTES || stdinBytes > MAX_STDIN_BYTES + 1) throw new ProtocolError('request too large');
  if (buf.length < HEADER + envBytes + stdinBytes) return undefined;
  if (buf.length > HEADER + envBytes + stdinBytes) throw new ProtocolError('bytes after the request');
  const env: Record<string, string> = {};
  for (const entry of buf
    .subarray(HEADER, HEADER + envBytes)
    .toString('utf8')
    .split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return { version, kind, env, stdin: Buffer.from(buf.subarray(HEADER + envBytes)) };
}

/**
 * The whole length of the request whose first bytes are `head`, once the header says it (undefined before); throws
 * ProtocolError as parseRequest does. A request in another version is complete at its version field (the caller
 * answers HCNV without reading more).
 */
function requestLength(head: Buffer): number | undefined {
  if (head.length >= 4 && head.subarray(0, 4).toString('latin1') !== MAGIC.request) {
    throw new ProtocolError('not a hcn-cni service request');
  }
  if (head.length < 8) return undefined;
  if (head.readUInt32LE(4) !== PROTOCOL_VERSION) return head.length;
  if (head.length < HEADER) return undefined;
  const envBytes = head.readUInt32LE(12);
  const stdinBytes = head.readUInt32LE(16);
  if (envBytes > MAX_ENV_BYTES || stdinBytes > MAX_STDIN_BYTES + 1) throw new ProtocolError('request too large');
  return HEADER + envBytes + stdinBytes;
}

/**
 * Gathers one request's bytes as they arrive. Chunks are kept as they came and joined once, when the header's
 * lengths say the request is complete: joining on every chunk copied a 1 MiB request 256 times in 4 KiB chunks.
 * Until the header is complete the (few, small) chunks are joined so it can be read.
 */
export class RequestReader {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private expected: number | undefined;

  /** The request once complete; undefined while incomplete; throws ProtocolError on garbage. */
  push(chunk: Buffer): Request | undefined {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    if (this.expected === undefined) {
      if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.bytes)];
      this.expected = requestLength(this.chunks[0]!);
      if (this.expected === undefined) return undefined;
    }
    if (this.bytes < this.expected) return undefined;
    return parseRequest(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.bytes));
  }

  /** Bytes received so far. */
  get received(): number {
    return this.bytes;
  }
}

/** encodeRequest: what the shim sends (the ops CLI and tests use it; the shim has its own in C++). */
export function encodeRequest(
  kind: number,
  env: Record<string, string | undefined>,
  stdin: Buffer,
  version = PROTOCOL_VERSION,
): Buffer {
  const envBuf = Buffer.from(
    Object.entries(env)
      .filter((e): e is [string, string] => e[1] !== undefined)
      .map(([k, v]) => `${k}=${v}\0`)
      .join(''),
    'utf8',
  );
  const head = Buffer.alloc(HEADER);
  head.write(MAGIC.request, 0, 'latin1');
  head.writeUInt32LE(version, 4);
  head.writeUInt32LE(kind, 8);
  head.writeUInt32LE(envBuf.length, 12);
  head.writeUInt32LE(stdin.length, 16);
  return Buffer.concat([head, envBuf, stdin]);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0, 0);
  return b;
}

export function encodeAccept(ifServiceDies: string): Buffer {
  const body = Buffer.from(ifServiceDies, 'utf8');
  return Buffer.concat([Buffer.from(MAGIC.accept, 'latin1'), u32(PROTOCOL_VERSION), u32(body.length), body]);
}

export function encodeVersionRefusal(): Buffer {
  return Buffer.concat([Buffer.from(MAGIC.version, 'latin1'), u32(PROTOCOL_VERSION)]);
}

/** The two frames of a hand-over after its request: the old service's "released" and the new one's "taken". */
export type HandOverFrame = 'released' | 'taken';

export function encodeHandOver(frame: HandOverFrame): Buffer {
  return Buffer.concat([Buffer.from(MAGIC[frame], 'latin1'), u32(PROTOCOL_VERSION)]);
}

/**
 * The first frame of `buf` in a hand-over conversation: undefined while fewer than 8 bytes have come, 'refused' for
 * HCNV (a service that does not hand over), 'other' for anything else (not a service of ours, another version).
 */
export function parseHandOver(buf: Buffer): HandOverFrame | 'refused' | 'other' | undefined {
  if (buf.length < 8) return undefined;
  const magic = buf.subarray(0, 4).toString('latin1');
  if (magic === MAGIC.version) return 'refused';
  if (buf.readUInt32LE(4) !== PROTOCOL_VERSION) return 'other';
  return magic === MAGIC.released ? 'released' : magic === MAGIC.taken ? 'taken' : 'other';
}

export function encodeResult(exitCode: number, stdout: string, stderr: string): Buffer {
  const out = Buffer.from(stdout, 'utf8');
  const err = Buffer.from(stderr, 'utf8');
  return Buffer.concat([
    Buffer.from(MAGIC.result, 'latin1'),
    u32(exitCode),
    u32(out.length),
    u32(err.length),
    out,
    err,
  ]);
}

export type Reply =
  | { type: 'refused'; version: number }
  | { type: 'result'; exitCode: number; stdout: string; stderr: string; ifServiceDies: string };

/** parseReply: the whole reply stream of one connection (accept + result, or a refusal); undefined if incomplete. */
export function parseReply(buf: Buffer): Reply | undefined {
  if (buf.length < 8) return undefined;
  const magic = buf.subarray(0, 4).toString('latin1');
  if (magic === MAGIC.version) return { type: 'refused', version: buf.readUInt32LE(4) };
  if (magic !== MAGIC.accept || buf.length < 12) return undefined;
  const n = buf.readUInt32LE(8);
  const r = 12 + n;
  if (buf.length < r + 16 || buf.subarray(r, r + 4).toString('latin1') !== MAGIC.result) return undefined;
  const outLen = buf.readUInt32LE(r + 8);
  const errLen = buf.readUInt32LE(r + 12);
  if (buf.length < r + 16 + outLen + errLen) return undefined;
  return {
    type: 'result',
    ifServiceDies: buf.subarray(12, r).toString('utf8'),
    exitCode: buf.readUInt32LE(r + 4),
    stdout: buf.subarray(r + 16, r + 16 + outLen).toString('utf8'),
    stderr: buf.subarray(r + 16 + outLen, r + 16 + outLen + errLen).toString('utf8'),
  };
}

/**
 * Delegated IPAM: run the executable named by `ipam.type` the way the spec says a delegating plugin must.
 * - Found on CNI_PATH only, directory by directory in order (on Windows `<type>.exe` before `<type>`, like libcni's
 *   FindInPath); it must be a regular file, and executable where the OS has such a bit.
 * - Run directly (never through a shell) with the environment the plugin itself received and the same stdin bytes;
 *   only CNI_COMMAND is set to the verb being delegated (and, for delFor, the attachment's id and ifname).
 * - Bounded by ipamTimeoutSeconds: on expiry the child is killed and the verb fails with code 11 (try again later).
 * - Errors: the IPAM's own code 11 stays 11; any other failure is code 102 with the IPAM's message in ours and its
 *   code and details in details.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as fsConstants, promises as fsp } from 'node:fs';
import * as path from 'node:path';

import type { Env } from './env';
import { CniCode, CniError } from './cni-error';
import { isPlainObject } from './fields';
import { parseIpamResult, renderResult } from './result';
import {
  SUPPORTED_VERSIONS,
  type Attachment,
  type CniVersion,
  type IpamClient,
  type IpamResult,
  type NetConf,
} from './types';
import { compareVersions } from './version';

export interface IpamOptions {
  conf: NetConf;
  /** The environment the plugin received (the dispatcher's env object, not process.env). */
  env: Env;
  /** The exact stdin bytes the plugin received. */
  stdin: Buffer;
  /** CNI_PATH, split. */
  path: readonly string[];
  platform: NodeJS.Platform;
  /** Overrides ipamTimeoutSeconds (tests). */
  timeoutMs?: number;
}

/** IPAM output beyond this is refused: a result is a few hundred bytes, so more means something is badly wrong. */
export const MAX_IPAM_OUTPUT = 4 * 1024 * 1024;

/** findPlugin: the first regular (executable) file for `type` on `dirs`, or undefined. */
export async function findPlugin(
  type: string,
  dirs: readonly string[],
  platform: NodeJS.Platform,
): Promise<string | undefined> {
  // The file system is the host's, so the host's path.join; `platform` only decides ".exe" and the execute bit.
  const names = platform === 'win32' && !type.toLowerCase().endsWith('.exe') ? [`${type}.exe`, type] : [type];
  for (const dir of dirs) {
    for (const name of names) {
      const candidate = path.join(dir, name);
      try {
        const st = await fsp.stat(candidate);
        if (!st.isFile()) continue;
        // Windows has no execute bit; elsewhere a file we cannot execute is not a plugin.
        if (platform !== 'win32') await fsp.access(candidate, fsConstants.X_OK);
        return candidate;
      } catch {
        continue;
      }
    }
  }
  return undefined;
}

interface RunOutput {
  stdout: string;
}

/** createIpamClient: an IpamClient bound to one invocation's configuration, environment and stdin. */
export function createIpamClient(options: IpamOptions): IpamClient {
  return new ExecIpamClient(options);
}

class ExecIpamClient implements IpamClient {
  readonly configured: boolean;
  readonly type: string | undefined;
  private readonly opts: IpamOptions;
  private versions: Promise<string[]> | undefined;
  private located: Promise<string> | undefined;

  constructor(opts: IpamOptions) {
    this.opts = opts;
    this.type = opts.conf.ipam?.type;
    this.configured = this.type !== undefined;
  }

  async add(): Promise<IpamResult> {
    const out = await this.runNegotiated('ADD');
    return parseIpamResult(parseJson(out.stdout, this.name(), 'ADD'), this.name());
  }

  async del(): Promise<void> {
    await this.runNegotiated('DEL');
  }

  async check(): Promise<void> {
    await this.runNegotiated('CHECK');
  }

  /**
   * The spec's way first: the same stdin. An IPAM older than our cniVersion refuses it with code 1 (Debian's
   * host-local 1.1.1 does not speak 1.1.0, the version a GC- and STATUS-capable conflist must have); then the request
   * is repeated at the newest version both speak, so an operator need not downgrade the whole conflist.
   */
  private async runNegotiated(verb: 'ADD' | 'DEL' | 'CHECK'): Promise<RunOutput> {
    try {
      return await this.run(verb, {});
    } catch (e) {
      if (!(e instanceof CniError) || (e.cause as ErrorJson | undefined)?.code !== CniCode.INCOMPATIBLE_VERSION)
        throw e;
      const version = await this.commonVersion();
      if (version === this.opts.conf.cniVersion) throw e;
      return this.run(verb, {}, this.requestAt(version, verb === 'CHECK'));
    }
  }

  /** The newest version the IPAM speaks that is not newer than ours. */
  private async commonVersion(): Promise<string> {
    const theirs = await this.supportedVersions();
    const ours = this.opts.conf.cniVersion;
    const common = SUPPORTED_VERSIONS.filter((v) => theirs.includes(v) && compareVersions(v, ours) <= 0);
    const version = theirs.includes(ours) ? ours : common[common.length - 1];
    if (version === undefined) {
      throw new CniError(
        CniCode.IPAM_FAILURE,
        `ipam plugin ${this.name()} supports none of our versions up to ${ours}`,
        `it supports ${theirs.join(', ')}`,
      );
    }
    return version;
  }

  /** The configuration re-stated at another version: GC-only keys dropped, prevResult kept (re-shaped) for CHECK. */
  private requestAt(version: string, keepPrevResult: boolean): Buffer {
    const conf: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(this.opts.conf.raw)) {
      const lower = k.toLowerCase();
      if (lower === 'cniversion' || lower === 'prevresult' || lower.startsWith('cni.dev/')) continue;
      conf[k] = v;
    }
    conf.cniVersion = version;
    if (keepPrevResult && this.opts.conf.prevResult)
      conf.prevResult = renderResult(this.opts.conf.prevResult, version as CniVersion);
    return Buffer.from(JSON.stringify(conf));
  }

  /**
   * delFor: DEL on behalf of another attachment (GC). The request is a synthesized DEL, not the GC request: GC-only
   * keys and prevResult are dropped, and cniVersion is lowered to the newest version the IPAM speaks when it does
   * not speak ours (GC always runs at 1.1.0, which Debian's host-local 1.1.1 refuses with code 1).
   */
  async delFor(attachment: Attachment): Promise<void> {
    this.requireConfigured();
    const version = await this.commonVersion();
    await this.run(
      'DEL',
      { CNI_CONTAINERID: attachment.containerId, CNI_IFNAME: attachment.ifname },
      this.requestAt(version, false),
    );
  }

  async installed(): Promise<boolean> {
    if (!this.configured) return false;
    try {
      await this.locate();
      return true;
    } catch {
      return false;
    }
  }

  async gc(): Promise<boolean> {
    return this.forwardIfSupported('GC');
  }

  /**
   * status: CNI_PATH is optional for STATUS, and without it there is nowhere to look; STATUS is informational (a
   * failure can mark the node NotReady), so that is "not forwarded" rather than an error.
   */
  async status(): Promise<boolean> {
    this.requireConfigured();
    if (this.opts.path.length === 0) return false;
    return this.forwardIfSupported('STATUS');
  }

  /** GC and STATUS exist from 1.1.0; an IPAM that does not list 1.1.0 would answer them with an error. */
  private async forwardIfSupported(verb: 'GC' | 'STATUS'): Promise<boolean> {
    this.requireConfigured();
    const versions = await this.supportedVersions();
    if (!versions.includes('1.1.0')) return false;
    await this.run(verb, {});
    return true;
  }

  /** supportedVersions: the IPAM's VERSION answer, asked once per invocation. */
  private supportedVersions(): Promise<string[]> {
    this.versions ??= (async () => {
      const stdin = Buffer.from(JSON.stringify({ cniVersion: this.opts.conf.cniVersion }));
      const out = await this.run('VERSION', {}, stdin);
      const parsed = parseJson(out.stdout, this.name(), 'VERSION');
      const list = isPlainObject(parsed) ? parsed.supportedVersions : undefined;
      if (!Array.isArray(list) || !list.every((v): v is string => typeof v === 'string')) {
        throw new CniError(
          CniCode.IPAM_FAILURE,
          `ipam plugin ${this.name()} answered VERSION without a supportedVersions list`,
          out.stdout.slice(0, 2000),
        );
      }
      return list;
    })();
    return this.versions;
  }

  private name(): string {
    return JSON.stringify(this.type ?? '');
  }

  private requireConfigured(): void {
    if (!this.configured) {
      throw new CniError(CniCode.INTERNAL, 'no delegated IPAM is configured (ipam.type is not set)');
    }
  }

  private locate(): Promise<string> {
    this.located ??= (async () => {
      const found = await findPlugin(this.type!, this.opts.path, this.opts.platform);
      if (found === undefined) {
        throw new CniError(
          CniCode.IPAM_FAILURE,
          `ipam plugin ${this.name()} not found on CNI_PATH [${this.opts.path.join(', ')}]`,
        );
      }
      return found;
    })();
    return this.located;
  }

  private async run(
    verb: string,
    overrides: Record<string, string>,
    stdin: Buffer = this.opts.stdin,
  ): Promise<RunOutput> {
    this.requireConfigured();
    const file = await this.locate();
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.opts.env)) if (v !== undefined) env[k] = v;
    Object.assign(env, overrides, { CNI_COMMAND: verb });
    const timeoutMs = this.opts.timeoutMs ?? this.opts.conf.ipamTimeoutSeconds * 1000;
    const r = await execPlugin(file, env, stdin, timeoutMs, this.name(), verb);
    // A plugin that prints an error object but exits 0 has still failed.
    const error = r.code !== 0 || verb !== 'VERSION' ? parseErrorJson(r.stdout) : undefined;
    if (error) throw ipamError(this.name(), verb, error);
    if (r.code === 0) return { stdout: r.stdout };
    const how = r.signal ? `was killed by ${r.signal}` : `exited with code ${r.code}`;
    throw new CniError(
      CniCode.IPAM_FAILURE,
      `ipam plugin ${this.name()} failed: ${verb} ${how} without an error result`,
      excerpt(r.stdout, r.stderr),
    );
  }
}

interface ErrorJson {
  code: number;
  msg: string;
  details?: string;
}

function parseErrorJson(stdout: string): ErrorJson | undefined {
  let v: unknown;
  try {
    v = JSON.parse(stdout);
  } catch {
    return undefined;
  }
  if (!isPlainObject(v) || typeof v.code !== 'number' || typeof v.msg !== 'string') return undefined;
  return {
    code: v.code,
    msg: v.msg,
    ...(typeof v.details === 'string' && v.details !== '' ? { details: v.details } : {}),
  };
}

/** ipamError: the IPAM's error JSON as ours; its code 11 stays 11, anything else is 102 with its code in details. */
function ipamError(name: string, verb: string, e: ErrorJson): CniError {
  const msg = `ipam plugin ${name} failed: ${e.msg}`;
  const details = `${verb}: ipam error code ${e.code}${e.details ? `: ${e.details}` : ''}`;
  return new CniError(
    e.code === CniCode.TRY_AGAIN_LATER ? CniCode.TRY_AGAIN_LATER : CniCode.IPAM_FAILURE,
    msg,
    details,
    { cause: e },
  );
}

function parseJson(stdout: string, name: string, verb: string): unknown {
  try {
    return JSON.parse(stdout);
  } catch (e) {
    throw new CniError(
      CniCode.IPAM_FAILURE,
      `ipam plugin ${name} returned an unusable result (${verb}): not JSON (${(e as Error).message})`,
      stdout.slice(0, 2000),
    );
  }
}

function excerpt(stdout: string, stderr: string): string {
  const parts: string[] = [];
  if (stdout.trim()) parts.push(`stdout: ${stdout.trim().slice(0, 2000)}`);
  if (stderr.trim()) parts.push(`stderr: ${stderr.trim().slice(0, 2000)}`);
  return parts.join('; ');
}

interface ExecResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * execPlugin: spawn without a shell, feed stdin, collect output, enforce the timeout (settleOnce says how a run
 * ends).
 */
function execPlugin(
  file: string,
  env: Record<string, string>,
  stdin: Buffer,
  timeoutMs: number,
  name: string,
  verb: string,
): Promise<ExecResult> {
  return new Promise<ExecResult>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(file, [], { env, stdio: ['pipe', 'pipe', 'pipe'], shell: false, windowsHide: true });
    } catch (e) {
      reject(startError(name, file, e));
      return;
    }
    const run = settleOnce(child, reject);
    run.startTimer(() => {
      const why = `ipam plugin ${name} timed out after ${timeoutMs / 1000}s (${verb}) and was killed`;
      run.abort(new CniError(CniCode.TRY_AGAIN_LATER, why));
    }, timeoutMs);
    child.on('error', (e) => run.finish(() => reject(startError(name, file, e))));
    const output = collectOutput(child, () => {
      const why = `ipam plugin ${name} wrote more than ${MAX_IPAM_OUTPUT} bytes (${verb}) and was killed`;
      run.abort(new CniError(CniCode.IPAM_FAILURE, why));
    });
    child.on('close', (code, signal) => run.finish(() => resolve({ code, signal, ...output() })));
    // A plugin may exit without reading stdin (VERSION, or a crash); the resulting EPIPE is not our failure.
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(stdin);
  });
}

/**
 * settleOnce: a plugin run ends once — by its close, its start error, the timeout, or too much output. On the last two
 * the promise settles at once (a grandchild that inherited the pipes must not keep us waiting): the child is killed
 * and the pipes are destroyed.
 */
function settleOnce(
  child: ChildProcess,
  reject: (error: CniError) => void,
): { finish(fn: () => void): void; abort(error: CniError): void; startTimer(fn: () => void, ms: number): void } {
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  const finish = (fn: () => void): void => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    fn();
  };
  const abort = (error: CniError): void =>
    finish(() => {
      child.kill('SIGKILL');
      child.stdout?.destroy();
      child.stderr?.destroy();
      reject(error);
    });
  const startTimer = (fn: () => void, ms: number): void => {
    timer = setTimeout(fn, ms);
  };
  return { finish, abort, startTimer };
}

/** collectOutput: stdout up to MAX_IPAM_OUTPUT (beyond it `overflow`), and the first 64 KiB of stderr, as text. */
function collectOutput(child: ChildProcess, overflow: () => void): () => { stdout: string; stderr: string } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let outBytes = 0;
  let errBytes = 0;
  child.stdout!.on('data', (chunk: Buffer) => {
    outBytes += chunk.length;
    if (outBytes > MAX_IPAM_OUTPUT) overflow();
    else out.push(chunk);
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    // stderr is only kept for error details; the first part is enough.
    if (errBytes < 64 * 1024) err.push(chunk);
    errBytes += chunk.length;
  });
  return () => ({ stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
}

function startError(name: string, file: string, e: unknown): CniError {
  return new CniError(
    CniCode.IPAM_FAILURE,
    `ipam plugin ${name} could not be started from ${file}: ${(e as Error).message}`,
  );
}

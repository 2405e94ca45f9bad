/**
 * dispatch: one CNI invocation, as a pure function of its environment and stdin bytes plus injected dependencies.
 * Only src/cli touches the process: it passes process.env and the stdin bytes in, writes `stdout` and exits with
 * `exitCode`. Logs go through the injected logger (stderr or a file), never to stdout, which carries exactly one
 * JSON document (a result, a VERSION answer or an error) or nothing.
 *
 * Order of checks, as in the Go skel: CNI_COMMAND; for VERSION answer at once; the verb's environment variables;
 * stdin (size, UTF-8, JSON object); cniVersion (exact match, then the verb's minimum); the configuration; then the
 * handler. Any failure before the handler means the handler is not called.
 */
import { parseNetConf } from './config';
import { checkEnv, readAttachment, readCommand, splitCniPath, type Env } from './env';
import { CniCode, CniError, isCniError } from './cni-error';
import { Fields, describeValue, isPlainObject } from './fields';
import { createIpamClient, type IpamOptions } from './ipam';
import { parseJsonText } from './json-text';
import { renderResult } from './result';
import {
  SUPPORTED_VERSIONS,
  type AttachmentArgs,
  type CniHandlers,
  type IpamClient,
  type LogLevel,
  type Logger,
  type NetConf,
  type Verb,
} from './types';
import { LATEST_VERSION, isVersionString, supportedVersion, versionOrDefault } from './version';

/** MAX_STDIN_BYTES: 1 MiB. Real configurations are a few KiB; more is a runaway producer, not a network config. */
export const MAX_STDIN_BYTES = 1024 * 1024;

export interface DispatchInput {
  env: Env;
  stdin: Buffer;
}

export interface DispatchOutput {
  stdout: string;
  exitCode: number;
}

export interface DispatchDeps {
  handlers: CniHandlers;
  /** Decides CNI_PATH's separator (';' on win32, ':' elsewhere), path rules and the IPAM lookup (".exe"). */
  platform: NodeJS.Platform;
  defaults: { stateDir: string; logFile?: string };
  createLogger(options: { level: LogLevel; file?: string }): Logger;
  now?: () => number;
  ipamFactory?: (options: IpamOptions) => IpamClient;
}

/** What is known so far about the invocation, for the error JSON and the log line. */
interface Progress {
  verb?: Verb;
  requestedVersion?: string;
  conf?: NetConf;
  log?: Logger;
  warnings: string[];
}

/** dispatch: run one CNI invocation. Never throws; every failure becomes error JSON and exit code 1. */
export async function dispatch(input: DispatchInput, deps: DispatchDeps): Promise<DispatchOutput> {
  const now = deps.now ?? Date.now;
  const started = now();
  const progress: Progress = { warnings: [] };
  let out: DispatchOutput;
  let failure: CniError | undefined;
  let cause: unknown;
  try {
    out = { stdout: await run(input, deps, progress), exitCode: 0 };
  } catch (e) {
    cause = e;
    failure = toCniError(e, progress.verb);
    const version = progress.requestedVersion ?? peekVersion(input.stdin);
    const body: Record<string, unknown> = {
      cniVersion: isVersionString(version) ? version : LATEST_VERSION,
      ...failure.toJSON(),
    };
    out = { stdout: `${JSON.stringify(body)}\n`, exitCode: 1 };
  }
  // A VERSION answer is not worth a log line: it would load the logger, the bulk of VERSION's start-up cost.
  if (failure || progress.verb !== 'VERSION') logOutcome(input.env, deps, progress, now() - started, failure, cause);
  return out;
}

async function run(input: DispatchInput, deps: DispatchDeps, progress: Progress): Promise<string> {
  const { env } = input;
  const verb = readCommand(env);
  progress.verb = verb;

  if (verb === 'VERSION') return answerVersion(input.stdin, progress);

  checkEnv(env, verb);
  // CNI_ARGS is parsed now so that a malformed one stops the verb before anything runs.
  const attachment: AttachmentArgs | undefined =
    verb === 'ADD' || verb === 'DEL' || verb === 'CHECK' ? readAttachment(env, deps.platform) : undefined;
  const raw = decodeStdin(input.stdin);
  progress.requestedVersion = requestedVersion(raw);
  const cniVersion = supportedVersion(progress.requestedVersion, verb);

  const conf = parseNetConf(raw, { platform: deps.platform, defaults: deps.defaults, verb, cniVersion });
  progress.conf = conf;
  progress.warnings.push(...conf.warnings);
  const log = (progress.log = makeLogger(deps, conf, progress));

  const path = splitCniPath(env.CNI_PATH, deps.platform);
  // A flannel-style wrapper's IPAM reads its settings at the top level, as the delegate plugin would have got them.
  const stdin = conf.effective ? Buffer.from(JSON.stringify(conf.effective)) : input.stdin;
  const ipam = (deps.ipamFactory ?? createIpamClient)({ conf, env, stdin, path, platform: deps.platform });

  if (verb === 'GC' || verb === 'STATUS') {
    const ctx = { verb, conf, path, ipam, log: log.child({ verb }) };
    await (verb === 'GC' ? deps.handlers.gc(ctx) : deps.handlers.status(ctx));
    return '';
  }
  if (!attachment) throw new Error('unreachable: attachment is read for ADD, DEL and CHECK');
  const ctx = {
    verb,
    conf,
    attachment,
    ipam,
    log: log.child({ verb, containerId: attachment.containerId, ifname: attachment.ifname }),
  };
  if (verb === 'ADD') return `${JSON.stringify(renderResult(await deps.handlers.add(ctx), conf.cniVersion))}\n`;
  await (verb === 'DEL' ? deps.handlers.del(ctx) : deps.handlers.check(ctx));
  return '';
}

/**
 * requestedVersion: the configuration's cniVersion, read once here and handed on to the parser. No cniVersion means
 * 0.1.0 (libcni and skel read it so); errors then carry 0.1.0 too. Not a string: the document does not decode (6).
 */
function requestedVersion(raw: Record<string, unknown>): string {
  const top = new Fields(raw, '');
  const requested = top.get('cniVersion');
  if (requested !== undefined && typeof requested !== 'string') {
    throw new CniError(
      CniCode.DECODE_FAILURE,
      `failed to decode the network configuration: "${top.pathOf('cniVersion')}" must be a string, got ${describeValue(requested)}`,
    );
  }
  return versionOrDefault(requested) as string;
}

/**
 * answerVersion: `{cniVersion, supportedVersions}`. cniVersion echoes the request's (the spec says the output carries
 * the input's value); with no stdin it is the newest we speak. stdin is optional here, but if present it must be JSON.
 */
function answerVersion(stdin: Buffer, progress: Progress): string {
  let cniVersion: string = LATEST_VERSION;
  if (decodeText(stdin).trim() !== '') {
    const raw = decodeStdin(stdin);
    const v = new Fields(raw, '', { strict: false }).get('cniVersion');
    if (typeof v === 'string' && v !== '') cniVersion = v;
  }
  progress.requestedVersion = cniVersion;
  return `${JSON.stringify({ cniVersion, supportedVersions: [...SUPPORTED_VERSIONS] })}\n`;
}

/** decodeText: stdin as UTF-8 (a leading BOM, which Windows editors like to add, is dropped); code 6 otherwise. */
function decodeText(stdin: Buffer): string {
  if (stdin.length > MAX_STDIN_BYTES) {
    throw new CniError(
      CniCode.DECODE_FAILURE,
      `stdin is ${stdin.length} bytes; the network configuration may be at most ${MAX_STDIN_BYTES} bytes (1 MiB)`,
    );
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(stdin);
  } catch {
    throw new CniError(CniCode.DECODE_FAILURE, 'failed to decode stdin: it is not valid UTF-8');
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** decodeStdin: stdin as a JSON object (code 6 for empty, oversized, malformed or non-object input). */
function decodeStdin(stdin: Buffer): Record<string, unknown> {
  const text = decodeText(stdin);
  if (text.trim() === '')
    throw new CniError(CniCode.DECODE_FAILURE, 'stdin is empty; expected the network configuration as JSON');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new CniError(CniCode.DECODE_FAILURE, `failed to decode the network configuration: ${(e as Error).message}`);
  }
  if (!isPlainObject(raw)) {
    throw new CniError(
      CniCode.DECODE_FAILURE,
      `failed to decode the network configuration: expected a JSON object, got ${describeValue(raw)}`,
    );
  }
  return raw;
}

/** peekVersion: best effort, for the error JSON of failures that happen before stdin is read properly. */
function peekVersion(stdin: Buffer): string | undefined {
  if (stdin.length > MAX_STDIN_BYTES) return undefined;
  try {
    const raw: unknown = parseJsonText(stdin.toString('utf8'));
    if (!isPlainObject(raw)) return undefined;
    const v = new Fields(raw, '', { strict: false }).get('cniVersion');
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** toCniError: a CniError passes through; anything else is a bug, code 999 with the original message in details. */
function toCniError(e: unknown, verb: Verb | undefined): CniError {
  if (isCniError(e)) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new CniError(CniCode.INTERNAL, `internal error${verb ? ` in ${verb}` : ''}`, message, { cause: e });
}

/**
 * makeLogger: the logger the configuration asks for. A log file that cannot be opened must not break networking,
 * so it falls back to the default logger and says so.
 */
function makeLogger(deps: DispatchDeps, conf: NetConf, progress: Progress): Logger {
  try {
    return deps.createLogger(
      conf.logFile !== undefined ? { level: conf.logLevel, file: conf.logFile } : { level: conf.logLevel },
    );
  } catch (e) {
    progress.warnings.push(
      `log file ${JSON.stringify(conf.logFile)} is unusable (${e instanceof Error ? e.message : String(e)}); logging to stderr only`,
    );
    return deps.createLogger({ level: conf.logLevel });
  }
}

/**
 * logOutcome: a warn line per configuration warning, then the one line per invocation: who, what, how long, and how
 * it ended. Logging never fails the verb.
 */
function logOutcome(
  env: Env,
  deps: DispatchDeps,
  progress: Progress,
  durationMs: number,
  failure: CniError | undefined,
  cause: unknown,
): void {
  try {
    const log = progress.log ?? deps.createLogger({ level: 'info' });
    const who: Record<string, unknown> = { verb: progress.verb ?? env.CNI_COMMAND ?? null };
    if (env.CNI_CONTAINERID) who.containerId = env.CNI_CONTAINERID;
    if (env.CNI_IFNAME) who.ifname = env.CNI_IFNAME;
    if (progress.conf) who.network = progress.conf.name;
    // Each accepted-but-ignored thing gets a warn line of its own: buried in the verb's info line it went unseen.
    for (const warning of progress.warnings) log.warn({ ...who, warning }, warning);
    const line: Record<string, unknown> = { ...who, durationMs };
    if (failure === undefined) {
      log.info({ ...line, outcome: 'ok' }, `${progress.verb} ok`);
      return;
    }
    line.outcome = failure.code;
    if (failure.details) line.details = failure.details;
    if (failure.code === CniCode.INTERNAL && cause instanceof Error) line.stack = cause.stack;
    log.error(line, failure.message);
  } catch {
    // A broken logger must not change the protocol output.
  }
}

#!/usr/bin/env node
/**
 * hcn-sim: the HNS simulator service and its control CLI.
 *
 *   hcn-sim serve --listen ADDR [--state FILE] [--host FILE] [--log-level LEVEL]
 *   hcn-sim ctl [--address ADDR] <command> [args]      (ADDR defaults to $HCN_SIM)
 *
 * `serve` prints one JSON line {"listening":"<address>","pid":N} on stdout when ready and logs JSON lines to stderr.
 */
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { ControlClient } from '../sim/control-client';
import { LOG_LEVELS, type LogLevel } from '../log/logger';
import type { SimControlCommands, SimHost } from '../sim/control-types';
import { parseHresultArg } from '../sim/hresult-arg';
import { UsageError } from './usage-error';

const USAGE = `usage:
  hcn-sim serve --listen ADDR [--state FILE] [--host FILE] [--log-level LEVEL]
      ADDR: unix:/path.sock or tcp:127.0.0.1:PORT (PORT 0 picks one)
      --state FILE  keep persistent networks across restarts of the simulator
      --host FILE   JSON with SimHost overrides: adapters, version, v2, latencyMs, race, seed, …
  hcn-sim ctl [--address ADDR] <command> [args]      (ADDR defaults to $HCN_SIM)
    ping
    latency OP MS                         OP: HcnCreateNetwork, "HNSCall POST /networks", … or *
    fail OP HRESULT [--nth N] [--count N] HRESULT: 0x803B0006, 2151350278 or HCN_E_ADAPTER_NOT_FOUND
    hang OP [--ms N] [--nth N] [--count N]
    release [OP]
    kill-client OP [--nth N] [--count N]
    race delete-wins|create-wins|random [--seed N]
    delete-with-endpoints cascade|refuse
    restart [--down-ms N] [--drop-namespaces all|ID,…] [--rehydrate]   namespaces stay unless dropped;
                                          --rehydrate: endpoints stay, without their policies
    version MAJOR.MINOR [--no-v2|--v2]
    adapter add NAME MAC [--description TEXT] [--index N]
    adapter rm NAME
    container add ID | container rm ID   HCS compute systems (containers) for hot attach
    endpoint-state ID STATE   HNS's own state of an endpoint (5 Degraded, 6 Destroyed)
    host | dump | stats | calls
    reset [--keep-objects]
    wait-idle [--timeout-ms N]
    shutdown
  hcn-sim compare REPORT [--address ADDR] [--json]
      replays a host's self-test report (hcn-cni selftest --report) on a fresh simulator (or the one at ADDR) and
      prints every difference in shape or code; exit 1 when there is one`;

/** `--drop-namespaces all` or a comma-separated list of namespace ids. */
function dropNamespaces(v: string | undefined): { dropNamespaces?: true | string[] } {
  if (v === undefined) return {};
  if (v === 'all') return { dropNamespaces: true };
  const ids = v.split(',').map((x) => x.trim());
  if (ids.some((x) => x === ''))
    throw new UsageError(`--drop-namespaces takes "all" or ID,ID…, not ${JSON.stringify(v)}`);
  return { dropNamespaces: ids };
}

function int(v: string | undefined, what: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`${what} must be a non-negative integer, not ${JSON.stringify(v)}`);
  return Number(v);
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      listen: { type: 'string' },
      state: { type: 'string' },
      host: { type: 'string' },
      'log-level': { type: 'string' },
      'exit-with-stdin': { type: 'boolean' },
    },
    strict: true,
  });
  if (!values.listen) throw new UsageError('serve needs --listen ADDR');
  // Loaded here, not at the top: `ctl` runs once per command and should start fast.
  const level = values['log-level'] ?? process.env.HCN_SIM_LOG_LEVEL ?? 'info';
  if (!LOG_LEVELS.includes(level as LogLevel))
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
  const [{ Engine }, { makeHost }, { createLogger }, { StateFile }, { SimServer }] = await Promise.all([
    import('../sim/engine'),
    import('../sim/host'),
    import('../log/logger'),
    import('../sim/persistence'),
    import('../sim/server'),
  ]);
  const logger = createLogger({ level: level as LogLevel, base: { name: 'hcn-sim' } });
  let partial: Partial<SimHost> = {};
  if (values.host) partial = JSON.parse(fs.readFileSync(values.host, 'utf8')) as Partial<SimHost>;
  const engine = new Engine({
    host: makeHost(partial),
    stateFile: values.state ? new StateFile(values.state) : undefined,
    logger,
  });
  const server = new SimServer(engine, logger);
  const listening = await server.listen(values.listen);

  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ why }, 'stopping');
    void server.close().finally(() => process.exit(0));
  };
  server.onShutdown = () => stop('shutdown request');
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  if (values['exit-with-stdin']) {
    // Started by startSimulator(): when the parent goes away, so do we.
    process.stdin.on('end', () => stop('stdin closed'));
    process.stdin.on('error', () => stop('stdin closed'));
    process.stdin.resume();
  }
  logger.info({ listening, state: values.state ?? null, adapters: engine.host.adapters.length }, 'hcn-sim listening');
  process.stdout.write(JSON.stringify({ listening, pid: process.pid }) + '\n');
}

type Ctl = keyof SimControlCommands;

const CTL_OPTIONS = {
  address: { type: 'string' },
  nth: { type: 'string' },
  count: { type: 'string' },
  ms: { type: 'string' },
  seed: { type: 'string' },
  'down-ms': { type: 'string' },
  'drop-namespaces': { type: 'string' },
  rehydrate: { type: 'boolean' },
  'timeout-ms': { type: 'string' },
  v2: { type: 'boolean' },
  'no-v2': { type: 'boolean' },
  'keep-objects': { type: 'boolean' },
  description: { type: 'string' },
  index: { type: 'string' },
} as const;

/** One `ctl` command's arguments: its positionals after the command, the options, and the fault's --nth/--count. */
interface CtlInput {
  command: string;
  rest: string[];
  values: ReturnType<typeof parseArgs<{ options: typeof CTL_OPTIONS; allowPositionals: true; strict: true }>>['values'];
  fault: { nth: number | undefined; count: number | undefined };
  /** Refuses fewer than n positionals, saying their shape. */
  need(n: number, shape: string): void;
}

type CtlRequest = { ctl: Ctl; args: Record<string, unknown> };

const noArgs = (ctl: Ctl) => (): CtlRequest => ({ ctl, args: {} });

/** Each `ctl` command onto its control command and wire arguments. */
const CTL_COMMANDS = new Map<string, (c: CtlInput) => CtlRequest>([
  ...(['ping', 'host', 'dump', 'stats', 'calls', 'shutdown'] as const).map((n) => [n, noArgs(n)] as const),
  [
    'latency',
    ({ need, rest }) => (need(2, 'OP MS'), { ctl: 'latency', args: { op: rest[0], ms: int(rest[1], 'MS') } }),
  ],
  [
    'fail',
    ({ need, rest, fault }) => (
      need(2, 'OP HRESULT'),
      { ctl: 'fail', args: { op: rest[0], hresult: hresultArg(rest[1]), ...fault } }
    ),
  ],
  [
    'hang',
    ({ need, rest, values, fault }) => (
      need(1, 'OP'),
      { ctl: 'hang', args: { op: rest[0], ms: int(values.ms, '--ms'), ...fault } }
    ),
  ],
  ['release', ({ rest }) => ({ ctl: 'release', args: rest[0] === undefined ? {} : { op: rest[0] } })],
  ['kill-client', ({ need, rest, fault }) => (need(1, 'OP'), { ctl: 'kill-client', args: { op: rest[0], ...fault } })],
  [
    'race',
    ({ need, rest, values }) => (
      need(1, 'delete-wins|create-wins|random'),
      { ctl: 'race', args: { mode: rest[0], seed: int(values.seed, '--seed') } }
    ),
  ],
  [
    'delete-with-endpoints',
    ({ need, rest }) => (need(1, 'cascade|refuse'), { ctl: 'delete-with-endpoints', args: { mode: rest[0] } }),
  ],
  [
    'restart',
    ({ values }) => ({
      ctl: 'restart',
      args: {
        downMs: int(values['down-ms'], '--down-ms'),
        ...dropNamespaces(values['drop-namespaces']),
        ...(values.rehydrate ? { rehydrate: true } : {}),
      },
    }),
  ],
  [
    'endpoint-state',
    ({ need, rest }) => (
      need(2, 'ID STATE'),
      { ctl: 'endpoint-state', args: { id: rest[0], state: int(rest[1], 'STATE') } }
    ),
  ],
  ['version', versionRequest],
  ['adapter', adapterRequest],
  [
    'container',
    ({ rest }) => {
      if ((rest[0] === 'add' || rest[0] === 'rm') && rest[1])
        return { ctl: `container-${rest[0]}`, args: { id: rest[1] } };
      throw new UsageError('container add ID | container rm ID');
    },
  ],
  ['reset', ({ values }) => ({ ctl: 'reset', args: { objects: !values['keep-objects'] } })],
  ['wait-idle', ({ values }) => ({ ctl: 'wait-idle', args: { timeoutMs: int(values['timeout-ms'], '--timeout-ms') } })],
]);

function hresultArg(text: string | undefined): number {
  try {
    return parseHresultArg(text);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

function versionRequest({ need, rest, values }: CtlInput): CtlRequest {
  need(1, 'MAJOR.MINOR');
  const m = /^(\d+)\.(\d+)$/.exec(rest[0]!);
  if (!m) throw new UsageError(`version must be MAJOR.MINOR, not ${rest[0]}`);
  const v2 = values['no-v2'] ? false : values.v2 ? true : undefined;
  return { ctl: 'version', args: { major: Number(m[1]), minor: Number(m[2]), v2 } };
}

function adapterRequest({ rest, values }: CtlInput): CtlRequest {
  if (rest[0] === 'add') {
    if (rest.length < 3) throw new UsageError('adapter add needs NAME MAC');
    const adapter = {
      Name: rest[1],
      MacAddress: rest[2],
      InterfaceDescription: values.description,
      InterfaceIndex: int(values.index, '--index'),
    };
    return { ctl: 'adapter-add', args: { adapter } };
  }
  if (rest[0] === 'rm') {
    if (rest.length < 2) throw new UsageError('adapter rm needs NAME');
    return { ctl: 'adapter-rm', args: { name: rest[1] } };
  }
  throw new UsageError('adapter add NAME MAC | adapter rm NAME');
}

/** Maps `ctl` command-line arguments onto a control command and its wire arguments. */
function controlRequest(argv: string[]): { address: string; ctl: Ctl; args: Record<string, unknown> } {
  const { values, positionals } = parseArgs({ args: argv, options: CTL_OPTIONS, allowPositionals: true, strict: true });
  const address = values.address ?? process.env.HCN_SIM;
  if (!address) throw new UsageError('ctl needs --address ADDR (or HCN_SIM in the environment)');
  const [command, ...rest] = positionals;
  const need = (n: number, shape: string) => {
    if (rest.length < n) throw new UsageError(`${command} needs ${shape}`);
  };
  const fault = { nth: int(values.nth, '--nth'), count: int(values.count, '--count') };
  if (command === undefined) throw new UsageError('ctl needs a command');
  const request = CTL_COMMANDS.get(command);
  if (!request) throw new UsageError(`unknown command ${command}`);
  return { address, ...request({ command, rest, values, fault, need }) };
}

async function ctl(argv: string[]): Promise<void> {
  const { address, ctl: command, args } = controlRequest(argv);
  const clean = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
  const result = await new ControlClient(address).send(command, clean);
  process.stdout.write(JSON.stringify(result ?? { ok: true }, null, 2) + '\n');
}

async function main(argv: string[]): Promise<void> {
  const [mode, ...rest] = argv;
  if (mode === 'serve') return serve(rest);
  if (mode === 'ctl') return ctl(rest);
  if (mode === 'compare') {
    const { compare } = await import('./sim-compare');
    process.exitCode = await compare(rest, { env: process.env, out: (s) => process.stdout.write(s) });
    return;
  }
  if (mode === undefined || mode === '--help' || mode === '-h' || mode === 'help') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  throw new UsageError(`unknown mode ${mode}`);
}

main(process.argv.slice(2)).catch((e: unknown) => {
  const err = e as Error & { code?: string };
  // parseArgs reports bad options with ERR_PARSE_ARGS_* codes: those are usage errors too.
  const usage = e instanceof UsageError || (typeof err.code === 'string' && err.code.startsWith('ERR_PARSE_ARGS'));
  process.stderr.write(`hcn-sim: ${err.message}\n${usage ? USAGE + '\n' : ''}`);
  process.exit(usage ? 2 : 1);
});

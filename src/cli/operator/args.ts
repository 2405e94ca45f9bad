/**
 * The operator tool's command line: one command and options, in any order. Anything the CLI does not know, an option
 * that the command does not take, or a missing value is a UsageError (exit 2). Nothing here touches HNS or the disk.
 */
import { parseArgs as parseUtilArgs } from 'node:util';
import { defaultBinDir, defaultConfDir } from '../../cni/defaults';
import { UsageError } from '../usage-error';

export const COMMANDS = [
  'networks',
  'endpoints',
  'namespaces',
  'audit',
  'gc',
  'state',
  'version',
  'service',
  'help',
] as const;
export type Command = (typeof COMMANDS)[number];

export interface OpsArgs {
  command?: Command;
  help: boolean;
  json: boolean;
  verbose: boolean;
  conf?: string;
  stateDir?: string;
  /** audit */
  dryRun: boolean;
  /** gc */
  valid?: string;
  /** state */
  clearQuarantine: boolean;
  /** service: its address */
  service?: string;
  /** service: answer as a probe (one line, exit 0 or 1) */
  probe?: 'liveness' | 'readiness';
}

/**
 * The options, for node:util parseArgs. `command` marks an option that belongs to one command; the others apply to
 * every command.
 */
const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  json: { type: 'boolean' },
  verbose: { type: 'boolean', short: 'v' },
  conf: { type: 'string' },
  'state-dir': { type: 'string' },
  'dry-run': { type: 'boolean', command: 'audit' },
  'clear-quarantine': { type: 'boolean', command: 'state' },
  valid: { type: 'string', command: 'gc' },
  service: { type: 'string', command: 'service' },
  probe: { type: 'string', command: 'service' },
} as const satisfies Record<string, { type: 'boolean' | 'string'; short?: string; command?: Command }>;

/** parseArgs' own errors, said the way the rest of the tool says them (and named by the option as typed). */
function usageError(e: unknown): UsageError {
  const err = e as { code?: string; message?: string };
  const option = /'(-[^' ]+)/.exec(err.message ?? '')?.[1] ?? '';
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return new UsageError(`unknown option ${option}`);
  if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return new UsageError(
      /does not take an argument/.test(err.message ?? '') ? `${option} takes no value` : `${option} needs a value`,
    );
  }
  return new UsageError(err.message ?? String(e));
}

export function parseArgs(argv: readonly string[]): OpsArgs {
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine(argv);
  } catch (e) {
    if (typeof (e as { code?: unknown }).code === 'string' && (e as { code: string }).code.startsWith('ERR_PARSE_ARGS'))
      throw usageError(e);
    throw e;
  }
  const { values, positionals, tokens } = parsed;
  for (const t of tokens) {
    if (t.kind === 'option' && OPTIONS[t.name as keyof typeof OPTIONS].type === 'string' && t.value === '')
      throw new UsageError(`${t.rawName} needs a value`);
  }
  const [command, extra] = positionals;
  if (command !== undefined && !(COMMANDS as readonly string[]).includes(command))
    throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  if (extra !== undefined)
    throw new UsageError(`unexpected argument ${JSON.stringify(extra)} (the command is ${command})`);
  const out: OpsArgs = {
    help: values.help ?? false,
    json: values.json ?? false,
    verbose: values.verbose ?? false,
    dryRun: values['dry-run'] ?? false,
    clearQuarantine: values['clear-quarantine'] ?? false,
    ...(command !== undefined ? { command: command as Command } : {}),
    ...(values.conf !== undefined ? { conf: values.conf } : {}),
    ...(values['state-dir'] !== undefined ? { stateDir: values['state-dir'] } : {}),
    ...(values.valid !== undefined ? { valid: values.valid } : {}),
    ...(values.service !== undefined ? { service: values.service } : {}),
  };
  if (values.probe !== undefined) {
    if (values.probe !== 'liveness' && values.probe !== 'readiness')
      throw new UsageError(`--probe is liveness or readiness, not ${JSON.stringify(values.probe)}`);
    out.probe = values.probe;
  }
  if (out.help) return out;
  for (const t of tokens) {
    const only: Command | undefined =
      t.kind === 'option' ? (OPTIONS[t.name as keyof typeof OPTIONS] as { command?: Command }).command : undefined;
    if (only && out.command !== only)
      throw new UsageError(`${t.kind === 'option' ? t.rawName : ''} only applies to "${only}"`);
  }
  if (out.command === 'gc' && out.valid === undefined) {
    throw new UsageError(
      'gc needs --valid FILE: the attachments that are still in use (a JSON list of {containerID, ifname}); everything else of ours is removed',
    );
  }
  return out;
}

function parseCommandLine(argv: readonly string[]) {
  return parseUtilArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true, tokens: true });
}

export const USAGE = `usage: hcn-cni <command> [options]

Without CNI_COMMAND in its environment hcn-cni runs the command given (with it, it is the CNI plugin).

Commands of their own (each with its own options: hcn-cni <command> --help):
  serve                     run the hcn-cni service that the shim hands each CNI verb to
  install                   put hcn-cni where containerd looks: the executable, the shim, the conflist
  uninstall [--force]       remove what install put and every HNS object that is provably hcn-cni's;
                            refuses while a pod is attached unless --force
  doctor [--json] [--bundle FILE]
                            what is wrong on this node, with why and what next; exit 0/1/2 by the
                            worst severity
  selftest [--report FILE]  run the HNS calls the plugin relies on against this host's HNS, on objects of
                            its own only, and record every answer (hcn-sim compare FILE replays them)

Commands:
  networks                  HNS networks: id, name, type, adapter, subnets, flags, owner
  endpoints                 HNS endpoints: id, name, network, IPs, MAC, namespace, owner
  namespaces                HCN namespaces and the endpoints in them
  audit [--dry-run]         judge every HNS network and endpoint (foreign, live, in-flight, protected,
                            orphan) and delete the orphans; --dry-run deletes nothing
  gc --valid FILE           remove every attachment and object of ours that FILE does not list; FILE is
                            a JSON list of {"containerID", "ifname"} or a CNI GC request carrying
                            "cni.dev/valid-attachments"
  state [--clear-quarantine]
                            attachments, intents, tombstones and quarantined records in the state
                            directory; --clear-quarantine deletes the quarantined files
  version                   plugin, CNI, addon and HNS versions, and the HNS API "apiVersion": "auto"
                            picks on this host
  service [--service ADDR]  whether the hcn-cni service (hcn-cni serve) is running at ADDR (default
                            HCN_CNI_SERVICE, else /run/hcn-cni/service.sock or \\\\.\\pipe\\hcn-cni), and
                            the requests it is running or has queued, its counts (verbs by code, HNS
                            calls and errors, audits) and its metrics address; exit 1 when it is not running
  service --probe liveness|readiness
                            one line, exit 0 or 1, for the DaemonSet's exec probes: liveness = the service
                            answers; readiness = it answers, accepts, and HNS answers
  help                      this list of commands and options (also -h, --help)

Options (any command):
  --conf FILE               a .conflist or .conf with an hcn-cni plugin (default: the first such file in
                            the CNI configuration directory, containerd's default:
                            ${defaultConfDir('win32')} on Windows, ${defaultConfDir('linux')} elsewhere;
                            else built-in defaults); it gives stateDir, hnsTimeoutSeconds, apiVersion and ipam
  --state-dir DIR           use this state directory instead of the configuration's
  --json                    machine-readable output on stdout
  -v, --verbose             audit and GC logs (pino JSON lines) on stderr
  -h, --help                this text

Environment:
  CNI_PATH                  gc: where the configured ipam plugin is looked up (default: containerd's
                            ${defaultBinDir('win32')} on Windows, ${defaultBinDir('linux')} elsewhere)
  HCN_SIM                   off Windows: address of the HNS simulator (hcn-sim)
  HCN_CNI_ADDON, HCN_CNI_HCN_LIBRARY
                            load the addon / HCN library from these paths
  HCN_CNI_SERVICE           service, serve (and the shim): the service's socket or pipe
  HCN_CNI_METRICS           serve: HOST:PORT for its Prometheus metrics, as --metrics (hcn-cni serve --help)

Exit status: 0 success; 1 failure (HNS unreachable, bad configuration, errors while deleting);
2 usage error.
`;

/**
 * The operator tool's command line: one command and options, in any order. Anything the CLI does not know, an option
 * that the command does not take, or a missing value is a UsageError (exit 2). Nothing here touches HNS or the disk.
 */

export const COMMANDS = ['networks', 'endpoints', 'namespaces', 'audit', 'gc', 'state', 'version', 'service', 'help'] as const;
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
}

import { UsageError } from '../usage-error';

/** Options every command takes. */
const GLOBAL_FLAGS: Record<string, 'help' | 'json' | 'verbose'> = { '--help': 'help', '-h': 'help', '--json': 'json', '--verbose': 'verbose', '-v': 'verbose' };
const GLOBAL_VALUES: Record<string, 'conf' | 'stateDir'> = { '--conf': 'conf', '--state-dir': 'stateDir' };

/** Options that belong to one command. */
const COMMAND_FLAGS: Record<string, { key: 'dryRun' | 'clearQuarantine'; command: Command }> = {
  '--dry-run': { key: 'dryRun', command: 'audit' },
  '--clear-quarantine': { key: 'clearQuarantine', command: 'state' },
};
const COMMAND_VALUES: Record<string, { key: 'valid' | 'service'; command: Command }> = {
  '--valid': { key: 'valid', command: 'gc' },
  '--service': { key: 'service', command: 'service' },
};

export function parseArgs(argv: readonly string[]): OpsArgs {
  const out: OpsArgs = { help: false, json: false, verbose: false, dryRun: false, clearQuarantine: false };
  const commandOnly: Array<{ option: string; command: Command }> = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg.startsWith('-') && arg !== '-') {
      const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
      const name = eq > 0 ? arg.slice(0, eq) : arg;
      const inline = eq > 0 ? arg.slice(eq + 1) : undefined;
      const value = (): string => {
        if (inline !== undefined) {
          if (inline === '') throw new UsageError(`${name} needs a value`);
          return inline;
        }
        const next = argv[i + 1];
        if (next === undefined || (next.startsWith('-') && next !== '-')) throw new UsageError(`${name} needs a value`);
        i++;
        return next;
      };
      const flag = (): void => {
        if (inline !== undefined) throw new UsageError(`${name} takes no value`);
      };
      if (GLOBAL_FLAGS[name]) {
        flag();
        out[GLOBAL_FLAGS[name]] = true;
      } else if (GLOBAL_VALUES[name]) {
        out[GLOBAL_VALUES[name]] = value();
      } else if (COMMAND_FLAGS[name]) {
        flag();
        out[COMMAND_FLAGS[name].key] = true;
        commandOnly.push({ option: name, command: COMMAND_FLAGS[name].command });
      } else if (COMMAND_VALUES[name]) {
        out[COMMAND_VALUES[name].key] = value();
        commandOnly.push({ option: name, command: COMMAND_VALUES[name].command });
      } else {
        throw new UsageError(`unknown option ${name}`);
      }
      continue;
    }
    if (out.command !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(arg)} (the command is ${out.command})`);
    if (!(COMMANDS as readonly string[]).includes(arg)) throw new UsageError(`unknown command ${JSON.stringify(arg)}`);
    out.command = arg as Command;
  }
  if (out.help) return out;
  for (const c of commandOnly) {
    if (out.command !== c.command) throw new UsageError(`${c.option} only applies to "${c.command}"`);
  }
  if (out.command === 'gc' && out.valid === undefined) {
    throw new UsageError('gc needs --valid FILE: the attachments that are still in use (a JSON list of {containerID, ifname}); everything else of ours is removed');
  }
  return out;
}

export const USAGE = `usage: hcn-cni <command> [options]

Without CNI_COMMAND in its environment hcn-cni is the operator's tool (with it, it is the CNI plugin).

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
                            the requests it is running or has queued; exit 1 when it is not running
  help                      this text

Options (any command):
  --conf FILE               a .conflist or .conf with an hcn-cni plugin (default: the first such file in
                            the CNI configuration directory, C:\\etc\\cni\\net.d on Windows and
                            /etc/cni/net.d elsewhere; else built-in defaults); it gives stateDir,
                            hnsTimeoutSeconds, apiVersion and ipam
  --state-dir DIR           use this state directory instead of the configuration's
  --json                    machine-readable output on stdout
  -v, --verbose             audit and GC logs (pino JSON lines) on stderr
  -h, --help                this text

Environment:
  CNI_PATH                  gc: where the configured ipam plugin is looked up (default: C:\\opt\\cni\\bin on
                            Windows, /opt/cni/bin elsewhere)
  HCN_SIM                   off Windows: address of the HNS simulator (hcn-sim)
  HCN_CNI_ADDON, HCN_CNI_HCN_LIBRARY
                            load the addon / HCN library from these paths
  HCN_CNI_SERVICE           service, serve (and the shim): the service's socket or pipe

Exit status: 0 success; 1 failure (HNS unreachable, bad configuration, errors while deleting);
2 usage error.
`;

/**
 * The operator's tool: hcn-cni without CNI_COMMAND, in the spirit of Microsoft's hnsdiag. `hcn-cni help` lists the
 * commands. Each command's module is loaded only when it runs, so `help` and usage errors load nothing else.
 *
 * Output goes to io.out, diagnostics to io.err. Exit codes: 0 success, 1 failure, 2 usage error.
 */
import { parseArgs, USAGE, type Command, type OpsArgs } from './operator/args';
import { UsageError } from './usage-error';
import type { OpsContext, OpsWriters } from './operator/context';

export interface OpsIo extends OpsWriters {
  /** Default: process.platform. */
  platform?: NodeJS.Platform;
  /** The pid intents of this process would carry. Default: process.pid. */
  pid?: number;
  now?: () => number;
}

type Runner = (ctx: OpsContext) => Promise<number>;

const RUNNERS: Record<Exclude<Command, 'help'>, () => Promise<Runner>> = {
  networks: async () => (await import('./operator/objects')).networks,
  endpoints: async () => (await import('./operator/objects')).endpoints,
  namespaces: async () => (await import('./operator/objects')).namespaces,
  audit: async () => (await import('./operator/audit')).runAudit,
  gc: async () => (await import('./operator/gc')).runGc,
  state: async () => (await import('./operator/state')).runState,
  version: async () => (await import('./operator/version')).runVersion,
  service: async () => (await import('./operator/service')).runService,
};

export async function runOps(argv: string[], io: OpsIo): Promise<number> {
  let args: OpsArgs;
  try {
    args = parseArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err(`hcn-cni: ${e.message}\nrun "hcn-cni help" for the commands and options\n`);
    return 2;
  }
  if (args.help || args.command === 'help') {
    io.out(USAGE);
    return 0;
  }
  if (args.command === undefined) {
    io.err(`hcn-cni: a command is needed (hcn-cni is a CNI plugin when CNI_COMMAND is set)\n\n${USAGE}`);
    return 2;
  }
  const command = args.command;
  const platform = io.platform ?? process.platform;
  let hnsTimeoutSeconds: number | undefined;
  try {
    const { loadConf } = await import('./operator/conf');
    const { OpsContext } = await import('./operator/context');
    const loaded = loadConf({
      platform,
      ...(args.conf !== undefined ? { file: args.conf } : {}),
      ...(args.stateDir !== undefined ? { stateDir: args.stateDir } : {}),
    });
    hnsTimeoutSeconds = loaded.conf.hnsTimeoutSeconds;
    const ctx = new OpsContext(io, args, loaded, { platform, pid: io.pid ?? process.pid, now: io.now ?? Date.now });
    const run = await RUNNERS[command]();
    return await run(ctx);
  } catch (e) {
    const { describeFailure } = await import('./operator/describe-failure');
    const { OpsError } = await import('./operator/context');
    const text = describeFailure(e, {
      platform,
      hcnSim: io.env.HCN_SIM,
      verbose: args.verbose,
      ...(hnsTimeoutSeconds ? { hnsTimeoutSeconds } : {}),
    });
    io.err(`hcn-cni ${command}: ${text}\n`);
    return e instanceof OpsError ? e.exitCode : 1;
  }
}

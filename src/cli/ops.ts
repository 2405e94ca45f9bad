/** The operator's tool (hcn-cni without CNI_COMMAND): filled in by the ops CLI work. */
export interface OpsIo {
  env: NodeJS.ProcessEnv;
  load: { addonPath?: string; libraryPath?: string };
  out(s: string): void;
  err(s: string): void;
}

export async function runOps(argv: string[], io: OpsIo): Promise<number> {
  io.err(`usage: hcn-cni is a CNI plugin: run it with CNI_COMMAND set (got: ${argv.join(' ') || 'no arguments'})\n`);
  return 2;
}

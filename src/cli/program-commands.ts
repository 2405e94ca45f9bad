/**
 * The commands of the hcn-cni executable that are programs of their own rather than the operator's tool: each has
 * its own options and `--help`, and its module is loaded only when it runs. src/cli/hcn-cni.ts dispatches by this
 * list (its table is typed by it); the operator's tool's commands are src/cli/operator/args.ts COMMANDS. `hcn-cni
 * help` lists both, one line each (test/cli/help.test.ts holds the help to these two lists).
 */
export const PROGRAM_COMMANDS = ['serve', 'install', 'uninstall', 'doctor', 'selftest'] as const;
export type ProgramCommand = (typeof PROGRAM_COMMANDS)[number];

export function isProgramCommand(word: string | undefined): word is ProgramCommand {
  return (PROGRAM_COMMANDS as readonly (string | undefined)[]).includes(word);
}

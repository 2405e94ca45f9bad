/**
 * `hcn-cni help` (and `--help`) lists every command the executable dispatches, each with its line, and nothing it
 * does not dispatch. The lists are the dispatcher's own: src/cli/program-commands.ts (the table src/cli/hcn-cni.ts
 * dispatches by) and the operator tool's COMMANDS (src/cli/operator/args.ts, whose runners are typed by it) — so a
 * command added to either without a help line fails here. The built executable then answers `<command> --help` for
 * each listed command with exit 0, as a person told to run it would try.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { COMMANDS, USAGE } from '../../src/cli/operator/args';
import { PROGRAM_COMMANDS } from '../../src/cli/program-commands';
import { CLI, ROOT } from '../helpers/cni-harness';

/** The entries of the help's command sections: each command's name and its text (the continuation lines with it). */
function helpEntries(usage: string): Array<{ name: string; text: string }> {
  const entries: Array<{ name: string; text: string }> = [];
  let inSection = false;
  for (const line of usage.split('\n')) {
    if (/^Commands\b/.test(line)) inSection = true;
    else if (line.trim() === '') inSection = false;
    else if (inSection && /^ {2}\S/.test(line)) entries.push({ name: line.trim().split(/\s+/)[0]!, text: line.trim() });
    else if (inSection && /^ {3,}\S/.test(line)) entries[entries.length - 1]!.text += ` ${line.trim()}`;
  }
  return entries;
}

const dispatched = [...PROGRAM_COMMANDS, ...COMMANDS];

it("lists exactly the dispatcher's commands, each with a line saying what it does", () => {
  const entries = helpEntries(USAGE);
  expect([...new Set(entries.map((e) => e.name))].sort()).toEqual([...new Set(dispatched)].sort());
  for (const e of entries) {
    // More than the synopsis: a description of at least three words that are not options or placeholders.
    const words = e.text.split(/\s+/).filter((w) => /^[a-z][a-z'’,;:.()-]*$/i.test(w) && w !== e.name);
    expect({ name: e.name, words: words.length >= 3 }).toEqual({ name: e.name, words: true });
  }
});

it('the executable compares its first argument with no command of its own outside the dispatch table', () => {
  const entry = fs.readFileSync(path.join(ROOT, 'src', 'cli', 'hcn-cni.ts'), 'utf8');
  const compared = [...entry.matchAll(/argv\[2\]\s*===?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
  expect(compared.filter((c) => !dispatched.includes(c as never))).toEqual([]);
  // Each program command is a key of the table (the type makes the table hold every one).
  expect(entry).toMatch(/const PROGRAMS: Record<ProgramCommand, \(\) => Promise<number>> = \{/);
});

it('the built executable prints the help for --help, and answers <command> --help for every listed command', () => {
  const run = (args: string[]) => {
    const env = { ...process.env };
    delete env.CNI_COMMAND;
    return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env, timeout: 30_000 });
  };
  const help = run(['--help']);
  expect({ status: help.status, stdout: help.stdout, stderr: help.stderr }).toEqual({
    status: 0,
    stdout: USAGE,
    stderr: '',
  });
  for (const name of new Set(helpEntries(USAGE).map((e) => e.name))) {
    const r = run([name, '--help']);
    expect({ name, status: r.status, usage: /^usage: hcn-cni /.test(r.stdout), stderr: r.stderr }).toEqual({
      name,
      status: 0,
      usage: true,
      stderr: '',
    });
  }
});

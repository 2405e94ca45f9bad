/**
 * containerd's configuration as containerd loads it: config.toml, then every file it `imports`, then theirs — in
 * containerd's order (containerd `cmd/containerd/server/config/config.go`: LoadConfigWithPlugins, a queue of files
 * each loaded once, so a circular import ends; resolveImports: a relative path is relative to the importing file's
 * directory, a path with `*` is a glob, `filepath.Glob`'s matches in sorted order, a pattern matching nothing adds
 * nothing). A missing config.toml means containerd's defaults; a missing or unreadable imported file stops
 * containerd (loadConfigFile's os.Open error), so here it is a refusal. The files are read through `reader`
 * (src/cli gives node:fs); the merge is containerd-config.ts's.
 */
import * as path from 'node:path';
import { importsOf, type ConfigFile } from './containerd-config';
import { InstallRefusal } from './refusal';

export interface ConfigReader {
  /** The file's text; throws the file system's error (ENOENT when there is none). */
  read(file: string): string;
  /** The names in a directory; throws when it cannot be listed. */
  list(dir: string): string[];
}

function errCode(e: unknown): string {
  return String((e as NodeJS.ErrnoException).code ?? (e as Error).message);
}

/** Go's filepath.Match metacharacters (the separator's escape aside). */
const META = /[*?[]/;

/** One path element's pattern as a regular expression, after Go's filepath.Match: `*`, `?`, `[...]` within it. */
function patternRegex(pattern: string, sep: string): RegExp {
  const notSep = sep === '\\' ? '[^\\\\]' : '[^/]';
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += `${notSep}*`;
    else if (c === '?') re += notSep;
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) throw new InstallRefusal(`imports: ${pattern} is not a valid pattern`);
      re += `[${pattern.slice(i + 1, end)}]`;
      i = end;
    } else re += c.replace(/[.+^${}()|\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Go's filepath.Glob: every directory the pattern's directory matches, then its sorted names the last element does. */
function glob(pattern: string, p: path.PlatformPath, reader: ConfigReader): string[] {
  const dir = p.dirname(pattern);
  const dirs = META.test(dir) && dir !== pattern ? glob(dir, p, reader) : [dir];
  const re = patternRegex(p.basename(pattern), p.sep);
  const out: string[] = [];
  for (const d of dirs) {
    let names: string[];
    try {
      names = reader.list(d);
    } catch {
      continue; // Glob ignores what it cannot read
    }
    out.push(
      ...names
        .filter((n) => re.test(n))
        .sort()
        .map((n) => p.join(d, n)),
    );
  }
  return out;
}

/** resolveImports: each import of `parent` as paths, relative ones against its directory, `*` ones globbed. */
function resolveImports(parent: string, imports: readonly string[], p: path.PlatformPath, reader: ConfigReader) {
  const out: string[] = [];
  for (const i of imports) {
    const file = p.isAbsolute(i) ? p.normalize(i) : p.join(p.dirname(parent), i);
    out.push(...(file.includes('*') ? glob(file, p, reader) : [file]));
  }
  return out;
}

/** config.toml and every file it imports, in containerd's order; none when there is no config.toml. */
export function loadContainerdConfig(main: string, platform: NodeJS.Platform, reader: ConfigReader): ConfigFile[] {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const files: ConfigFile[] = [];
  const loaded = new Set<string>();
  const pending = [main];
  while (pending.length > 0) {
    const file = pending.shift()!;
    if (loaded.has(file)) continue;
    let text: string;
    try {
      text = reader.read(file);
    } catch (e) {
      if (file === main && errCode(e) === 'ENOENT') return [];
      if (file === main) throw new InstallRefusal(`cannot read ${file}: ${errCode(e)}`);
      throw new InstallRefusal(`cannot read ${file}, imported by ${main}: ${errCode(e)}`);
    }
    const f = { text, source: file };
    files.push(f);
    loaded.add(file);
    pending.push(...resolveImports(file, importsOf(f), p, reader));
  }
  return files;
}

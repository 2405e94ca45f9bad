/**
 * Where containerd looks for CNI plugins and configurations, read from its config.toml. Pure: the text in, the
 * directories out (src/cli reads the file).
 *
 * The three forms containerd has used (containerd `internal/cri/config/config.go` `CniConfig`, and the plugin ids in
 * `plugins/types.go`):
 *  - config `version = 3` (containerd 2.x): `[plugins.'io.containerd.cri.v1.runtime'.cni]` with `bin_dirs` (a list,
 *    containerd 2.1 on; the first directory is searched first) or `bin_dir` (2.0; deprecated from 2.1 on, still
 *    read) and `conf_dir`;
 *  - config `version = 2` (containerd 1.x; containerd 2.x migrates it in memory): `[plugins."io.containerd.grpc.v1.cri".cni]`
 *    with `bin_dir` and `conf_dir` (what sig-windows-tools' `hostprocess/Install-Containerd.ps1` rewrites);
 *  - no version (version 1, containerd 1.x): `[plugins.cri.cni]`.
 * A key or section that is absent means containerd's own default, on Windows `%ProgramFiles%\containerd\cni\bin`
 * and `...\cni\conf` (containerd `internal/cri/config/config_windows.go`): src/cni/defaults.ts.
 */
import { parse as parseToml } from 'smol-toml';
import { defaultBinDir, defaultConfDir } from '../cni/defaults';
import { InstallRefusal } from './refusal';

/** What the found containerd accepts as a conflist's cniVersion (containernetworking/cni `pkg/version/version.go`). */
export type ConflistVersion = '1.0.0' | '1.1.0';

export interface CniDirs {
  /** Where the plugin executables go: the first directory containerd searches. */
  binDir: string;
  /** Every directory containerd passes as CNI_PATH (bin_dirs), binDir first. */
  binDirs: string[];
  confDir: string;
  /** The config form found: 'v3' (containerd 2.x), 'v2', 'v1' (containerd 1.x or 2.x migrating), or 'none'. */
  form: 'v3' | 'v2' | 'v1' | 'none';
  /**
   * The newest conflist cniVersion this containerd surely accepts. Only containerd 2.x reads a version 3 config, and
   * its libcni knows 1.1.0 (GC, STATUS); a version 2 or older config may be read by containerd 1.7, whose libcni
   * (1.1.x) stops at 1.0.0 and fails the pod *after* a 1.1.0 ADD succeeded — so 1.0.0 there.
   */
  cniVersion: ConflistVersion;
  /** Which key or default gave each directory, for the install's own output. */
  from: { binDir: string; confDir: string };
}

const SECTION: Record<'v3' | 'v2' | 'v1', string[]> = {
  v3: ['plugins', 'io.containerd.cri.v1.runtime', 'cni'],
  v2: ['plugins', 'io.containerd.grpc.v1.cri', 'cni'],
  v1: ['plugins', 'cri', 'cni'],
};

function sectionName(form: 'v3' | 'v2' | 'v1'): string {
  const [p, id, c] = SECTION[form];
  return form === 'v3' ? `[${p}.'${id}'.${c}]` : form === 'v2' ? `[${p}."${id}".${c}]` : `[${p}.${id}.${c}]`;
}

function dig(doc: unknown, keys: string[]): unknown {
  let at = doc;
  for (const k of keys) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[k];
  }
  return at;
}

function nonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '';
}

/** config.toml parsed, and the form its version says (a version no containerd reads is a refusal). */
function parseConfig(text: string, source: string): { doc: Record<string, unknown>; form: 'v1' | 'v2' | 'v3' } {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (e) {
    const first = String((e as Error).message).split('\n')[0];
    throw new InstallRefusal(
      `${source} is not valid TOML (${first}); give the directories with --bin-dir and --conf-dir`,
    );
  }
  const version = doc.version ?? 1;
  if (version !== 1 && version !== 2 && version !== 3) {
    throw new InstallRefusal(
      `${source} has config version ${JSON.stringify(version)}, which no containerd this knows reads (1, 2, 3); give the directories with --bin-dir and --conf-dir`,
    );
  }
  return { doc, form: version === 3 ? 'v3' : version === 2 ? 'v2' : 'v1' };
}

/** The CNI bin directories the CRI section sets (v3: bin_dirs, else bin_dir), and where that was said. */
function binDirsOf(
  s: Record<string, unknown>,
  form: 'v1' | 'v2' | 'v3',
  { name, source }: { name: string; source: string },
): { binDirs: string[] | undefined; binFrom: string } {
  if (form === 'v3' && s.bin_dirs !== undefined) {
    if (!Array.isArray(s.bin_dirs) || s.bin_dirs.length === 0 || !s.bin_dirs.every(nonEmptyString))
      throw new InstallRefusal(
        `${source}: ${name} bin_dirs is not a list of directories: ${JSON.stringify(s.bin_dirs)}`,
      );
    return { binDirs: s.bin_dirs, binFrom: `${name} bin_dirs[0] in ${source}` };
  }
  if (s.bin_dir !== undefined) {
    if (!nonEmptyString(s.bin_dir))
      throw new InstallRefusal(`${source}: ${name} bin_dir is not a directory: ${JSON.stringify(s.bin_dir)}`);
    return { binDirs: [s.bin_dir], binFrom: `${name} bin_dir in ${source}` };
  }
  return { binDirs: undefined, binFrom: '' };
}

/** One file of containerd's configuration: the main config.toml, or a file it imports. */
export interface ConfigFile {
  text: string;
  source: string;
}

/** config.toml's `imports` (a list of paths or glob patterns), refused in one line when it is not one. */
export function importsOf(file: ConfigFile): string[] {
  const imports = parseConfig(file.text, file.source).doc.imports;
  if (imports === undefined) return [];
  if (!Array.isArray(imports) || !imports.every(nonEmptyString))
    throw new InstallRefusal(`${file.source}: imports is not a list of files: ${JSON.stringify(imports)}`);
  return imports;
}

/**
 * The CNI directories from config.toml's text (`undefined`: there is no config.toml, containerd runs on its
 * defaults). `source` names the file in refusals. A value of the wrong type is a refusal, never a guess.
 */
export function cniDirsFromConfig(text: string | undefined, source: string, platform: NodeJS.Platform): CniDirs {
  return cniDirsFromConfigs(text === undefined ? [] : [{ text, source }], source, platform);
}

/** Each key of the CNI section, merged over the files in containerd's order, and the file that gave it. */
interface MergedSection {
  keys: Record<string, unknown>;
  from: Record<string, { name: string; source: string }>;
  form: 'v1' | 'v2' | 'v3';
  /** Whether any file has the section. */
  found: boolean;
}

/**
 * The files merged as containerd merges them (containerd `cmd/containerd/server/config/config.go`, LoadConfig and
 * mergeConfig; its config_test.go TestMergingPluginsWithTwoCriCniDropInConfigs): each file read in its own form
 * (migrated to the newest before the merge, so a version 2 import's `[plugins."io.containerd.grpc.v1.cri".cni]` is
 * the same section as a version 3 file's), plugin tables merged key by key, a later file's value replacing an
 * earlier one's (a list too: a list inside a plugin table is a value).
 */
function mergeSections(files: readonly ConfigFile[]): MergedSection {
  const merged: MergedSection = { keys: {}, from: {}, form: 'v1', found: false };
  const rank = { v1: 1, v2: 2, v3: 3 };
  for (const f of files) {
    const { doc, form } = parseConfig(f.text, f.source);
    if (rank[form] > rank[merged.form]) merged.form = form;
    const name = sectionName(form);
    const section = dig(doc, SECTION[form]);
    if (section === undefined) continue;
    if (typeof section !== 'object' || section === null || Array.isArray(section))
      throw new InstallRefusal(`${f.source}: ${name} is not a table`);
    merged.found = true;
    for (const [k, v] of Object.entries(section as Record<string, unknown>)) {
      merged.keys[k] = v;
      merged.from[k] = { name, source: f.source };
    }
  }
  return merged;
}

/**
 * The CNI directories from containerd's configuration: config.toml first, then the files it imports in the order
 * containerd loads them (none: there is no config.toml, containerd runs on its defaults). `source` names the main
 * file. A value of the wrong type is a refusal, never a guess.
 */
export function cniDirsFromConfigs(files: readonly ConfigFile[], source: string, platform: NodeJS.Platform): CniDirs {
  const defaults = {
    binDir: defaultBinDir(platform),
    confDir: defaultConfDir(platform),
  };
  if (files.length === 0) {
    return {
      binDir: defaults.binDir,
      binDirs: [defaults.binDir],
      confDir: defaults.confDir,
      form: 'none',
      cniVersion: '1.0.0',
      from: { binDir: `containerd's default (no ${source})`, confDir: `containerd's default (no ${source})` },
    };
  }
  const { keys: s, from, form, found } = mergeSections(files);
  const name = sectionName(form);
  const where = (k: string) => from[k] ?? { name, source };
  const { binDirs, binFrom } = binDirsOf(
    s,
    form,
    where(form === 'v3' && s.bin_dirs !== undefined ? 'bin_dirs' : 'bin_dir'),
  );
  if (s.conf_dir !== undefined && !nonEmptyString(s.conf_dir))
    throw new InstallRefusal(
      `${where('conf_dir').source}: ${where('conf_dir').name} conf_dir is not a directory: ${JSON.stringify(s.conf_dir)}`,
    );
  const absent = !found
    ? `containerd's default (${source} has no ${name})`
    : `containerd's default (${name} does not set it)`;
  const dirs = binDirs ?? [defaults.binDir];
  return {
    binDir: dirs[0]!,
    binDirs: dirs,
    confDir: (s.conf_dir as string | undefined) ?? defaults.confDir,
    form,
    cniVersion: form === 'v3' ? '1.1.0' : '1.0.0',
    from: {
      binDir: binDirs ? binFrom : absent,
      confDir: s.conf_dir !== undefined ? `${where('conf_dir').name} conf_dir in ${where('conf_dir').source}` : absent,
    },
  };
}

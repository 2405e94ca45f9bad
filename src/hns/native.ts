/**
 * The only module that loads the addon. It finds hcn.node (and, off Windows, the simulator client library that
 * stands in for computenetwork.dll) in one of three places, in this order:
 *  1. an explicit path (HCN_CNI_ADDON, passed in by the CLI of a test build) — never inside a packaged single
 *     executable: there the addon comes only from the executable itself and the HCN library only from its fixed
 *     place (System32 on Windows; beside the extracted addon elsewhere), so no environment variable can make the
 *     plugin, which runs with the runtime's privileges, load a library of someone else's choosing;
 *  2. inside the executable: a Node single-executable application carries both as SEA assets, and pkg as snapshot
 *     files. Neither can be dlopen'ed in place, so they are written once to a content-hashed directory — beside
 *     the executable on Windows (the CNI bin dir, writable by administrators only), else under the temp dir — and
 *     loaded from there (a hashed name never overwrites a DLL another process still has loaded). The pkg path is
 *     tested only with pkg's layout simulated (test/package/loader.test.ts sets process.pkg); no test builds with
 *     pkg itself, and the project packages with SEA;
 *  3. a source checkout or npm install: <package root>/build/Release/hcn.node.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { HcnError } from './hcn-error';
import type { NativeCapabilities, NativeHcn } from './native-types';

export interface LoadOptions {
  /** Use this hcn.node. */
  addonPath?: string;
  /** The HCN library to load instead of the one next to the addon (not used on Windows: always System32). */
  libraryPath?: string;
  /** Where embedded binaries are extracted (default: the OS temp dir). */
  extractDir?: string;
}

export interface LoadedNative {
  native: NativeHcn;
  capabilities: NativeCapabilities;
  addonPath: string;
  libraryPath: string | undefined;
  /** How the addon was found: 'explicit' | 'sea' | 'pkg' | 'package'. */
  source: string;
}

const ADDON = 'hcn.node';
const SIM_LIBRARY = 'libhcnsim.so';
const isWindows = process.platform === 'win32';

/** SEA asset names; scripts/package.js stores the binaries under the same names. */
export function seaAssetNames(
  platform: string = process.platform,
  arch: string = process.arch,
): { addon: string; library: string } {
  return { addon: `hcn-${platform}-${arch}.node`, library: `libhcnsim-${platform}-${arch}.so` };
}

let cached: LoadedNative | undefined;

export function loadNative(requested: LoadOptions = {}): LoadedNative {
  if (cached) return cached;
  const options = seaModule() ? { ...(requested.extractDir ? { extractDir: requested.extractDir } : {}) } : requested;
  const found = locate(options);
  const mod = { exports: {} as NativeHcn };
  process.dlopen(mod, found.addonPath);
  const native = mod.exports;
  native.setErrorClass(HcnError);
  const libraryPath = isWindows ? undefined : (options.libraryPath ?? found.libraryPath);
  const capabilities = native.init(libraryPath ? { libraryPath } : {});
  cached = { native, capabilities, addonPath: found.addonPath, libraryPath, source: found.source };
  return cached;
}

interface Located {
  addonPath: string;
  libraryPath?: string;
  source: string;
}

function locate(options: LoadOptions): Located {
  if (options.addonPath) {
    return { addonPath: options.addonPath, libraryPath: beside(options.addonPath), source: 'explicit' };
  }
  const sea = fromSea(options.extractDir);
  if (sea) return sea;
  const pkg = fromPkgSnapshot(options.extractDir);
  if (pkg) return pkg;
  const tried: string[] = [];
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'build', 'Release', ADDON);
    tried.push(candidate);
    if (fs.existsSync(candidate)) return { addonPath: candidate, libraryPath: beside(candidate), source: 'package' };
    if (path.dirname(dir) === dir) break;
  }
  throw new Error(
    `hcn-cni: native addon not found; looked in:\n  ${tried.join('\n  ')}\nbuild it with "npm run build:native"`,
  );
}

type SeaModule = { isSea(): boolean; getAsset(name: string): ArrayBuffer };

/** node:sea when this process is a single executable, else undefined (also on a Node without node:sea). */
function seaModule(): SeaModule | undefined {
  try {
    // node:sea exists from Node 20.12; a require() inside try (not an import) keeps older runtimes loading the rest
    // of the module.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above: an import would fail to load
    const sea = require('node:sea') as SeaModule;
    return sea.isSea() ? sea : undefined;
  } catch {
    return undefined;
  }
}

function beside(addonPath: string): string | undefined {
  return isWindows ? undefined : path.join(path.dirname(addonPath), SIM_LIBRARY);
}

function fromSea(extractDir?: string): Located | undefined {
  const sea = seaModule();
  if (!sea) return undefined;
  const names = seaAssetNames();
  let dirName: string | undefined;
  try {
    // Written by scripts/package.js: the extraction directory's content-hashed name, so no start hashes anything.
    dirName = (JSON.parse(Buffer.from(sea.getAsset('hcn-assets.json')).toString('utf8')) as { dir?: string }).dir;
  } catch {
    dirName = undefined;
  }
  const addon = Buffer.from(sea.getAsset(names.addon));
  let library: Buffer | undefined;
  if (!isWindows) {
    try {
      library = Buffer.from(sea.getAsset(names.library));
    } catch {
      library = undefined; // an executable built for real Windows hosts only
    }
  }
  return { ...extract(addon, library, extractDir, dirName), source: 'sea' };
}

function fromPkgSnapshot(extractDir?: string): Located | undefined {
  if (!(process as unknown as { pkg?: unknown }).pkg) return undefined;
  // pkg puts the package under /snapshot (C:\snapshot); dlopen needs a real file, so copy it out.
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'build', 'Release', ADDON);
    if (fs.existsSync(candidate)) {
      const lib = beside(candidate);
      const library = lib && fs.existsSync(lib) ? fs.readFileSync(lib) : undefined;
      return { ...extract(fs.readFileSync(candidate), library, extractDir), source: 'pkg' };
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * Writes the binaries to <base>/hcn-cni-<hash>/ once; later starts find them there and write nothing. The base is
 * the temp dir, except on Windows: there it is the executable's own directory (the CNI bin dir, writable by
 * administrators only) when it can be written — %TEMP% of SYSTEM is C:\Windows\Temp, where any user could create a
 * directory of that name first.
 */
function extract(
  addon: Buffer,
  library: Buffer | undefined,
  extractDir?: string,
  dirName?: string,
): { addonPath: string; libraryPath?: string } {
  const name = dirName && /^hcn-cni-[0-9a-f]{16}$/.test(dirName) ? dirName : hashedName(addon, library);
  let dir = path.join(extractDir ?? os.tmpdir(), name);
  if (isWindows && extractDir === undefined) {
    const beside = path.join(path.dirname(process.execPath), name);
    try {
      fs.mkdirSync(beside, { recursive: true });
      dir = beside;
    } catch {
      // a read-only install: the temp dir it is
    }
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  checkPrivateDir(dir);
  const addonPath = path.join(dir, ADDON);
  writeOnce(addonPath, addon);
  let libraryPath: string | undefined;
  if (library) {
    libraryPath = path.join(dir, SIM_LIBRARY);
    writeOnce(libraryPath, library);
  }
  return { addonPath, libraryPath };
}

/**
 * The temp dir is shared: a directory somebody else created there (or a symlink) could have its files swapped
 * between our check and the dlopen. POSIX only; on Windows the ACL of %TEMP% is the safeguard.
 */
function checkPrivateDir(dir: string): void {
  if (isWindows || typeof process.getuid !== 'function') return;
  const st = fs.lstatSync(dir);
  if (!st.isDirectory() || st.uid !== process.getuid() || (st.mode & 0o022) !== 0) {
    throw new Error(
      `hcn-cni: refusing to load the embedded addon from ${dir}: it is not a directory owned by uid ${process.getuid()} and writable only by it`,
    );
  }
}

/** The directories hashedName() names (the packaged executable's extracted addon): uninstall removes them. */
export const EXTRACTED_ADDON_DIR = /^hcn-cni-[0-9a-f]{16}$/;

/** hcn-cni-<16 hex of sha256(addon, library)>. */
function hashedName(addon: Buffer, library: Buffer | undefined): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded synchronously on demand: start-up pays only for what is used
  const crypto = require('crypto') as typeof import('crypto');
  const hash = crypto.createHash('sha256').update(addon);
  if (library) hash.update(library);
  return `hcn-cni-${hash.digest('hex').slice(0, 16)}`;
}

/**
 * Writes `content` to `file` unless it is already there, byte for byte (a size check alone would accept a stale or
 * planted file of the same length; reading ~0.4 MB back costs well under a millisecond). The new file is written
 * beside and renamed into place, so a reader never sees a torn file. Another process may win the race or hold the
 * file loaded (Windows refuses to replace a loaded DLL): then the rename fails, and what is there is fine if it
 * has the right bytes.
 */
function writeOnce(file: string, content: Buffer): void {
  if (sameBytes(file, content)) return;
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, content, { mode: 0o700 });
  try {
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    if (!sameBytes(file, content)) throw e;
  }
}

function sameBytes(file: string, content: Buffer): boolean {
  try {
    return fs.statSync(file).size === content.length && fs.readFileSync(file).equals(content);
  } catch {
    return false; // not there yet
  }
}

/** The addon if this process has loaded it (nothing is loaded by asking). */
export function loadedNative(): LoadedNative | undefined {
  return cached;
}

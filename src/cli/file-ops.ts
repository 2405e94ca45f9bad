/** The real file operations of install and uninstall (src/install/file-install.ts FileOps), and a dry run's. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FileOps } from '../install/file-install';

export function realFileOps(): FileOps {
  return {
    read(file) {
      try {
        return fs.readFileSync(file);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw e;
      }
    },
    writeNew(file, data) {
      const fd = fs.openSync(file, 'wx', 0o755);
      try {
        fs.writeFileSync(fd, data);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    },
    rename: (a, b) => fs.renameSync(a, b),
    unlink: (f) => fs.unlinkSync(f),
    list: (d) => fs.readdirSync(d),
    mkdirp: (d) => void fs.mkdirSync(d, { recursive: true }),
  };
}

/** An error as node:fs would throw it: its code, and the path in the message. */
function fsError(code: string, syscall: string, file: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${syscall} '${file}'`), { code, syscall, path: file });
}

/**
 * Reads as the real one does and changes nothing, but asks the file system the questions each change would (does
 * the directory exist, is it one, may this process write in it, is the target a directory) and fails as the real
 * change would, with the same code: a dry run that says "installed" where the real run refuses is no dry run. What
 * it would have created (directories, temporary files) it remembers, so later steps see them as the real run would.
 * Not asked: the free space, and what only the write itself finds out (a full disk, a read-only network share
 * that answers access() with yes).
 */
export function dryRunFileOps(): FileOps {
  const real = realFileOps();
  const dirs = new Set<string>();
  const files = new Set<string>();
  const writable = (dir: string) => {
    if (!dirs.has(dir)) fs.accessSync(dir, fs.constants.W_OK);
  };
  const exists = (f: string) => files.has(f) || entry(f) !== undefined;
  const mkdirp = (d: string): void => {
    const dir = path.resolve(d);
    if (dirs.has(dir)) return;
    const st = stat(dir);
    if (st) {
      if (!st.isDirectory()) throw fsError('EEXIST', 'mkdir', dir);
      return;
    }
    // Not there: a dangling symlink (a volume not mounted) cannot be created through; otherwise the parent must be.
    if (entry(dir)) throw fsError('ENOENT', 'mkdir', dir);
    const parent = path.dirname(dir);
    if (parent !== dir) mkdirp(parent);
    writable(parent);
    dirs.add(dir);
  };
  return {
    read: (f) => (files.has(f) ? undefined : real.read(f)),
    list: (d) => {
      if (dirs.has(path.resolve(d))) return [];
      try {
        return real.list(d);
      } catch {
        return [];
      }
    },
    mkdirp,
    writeNew: (f) => {
      const dir = path.resolve(path.dirname(f));
      if (!dirs.has(dir) && !stat(dir)?.isDirectory()) throw fsError(stat(dir) ? 'ENOTDIR' : 'ENOENT', 'open', f);
      writable(dir);
      if (exists(f)) throw fsError('EEXIST', 'open', f);
      files.add(f);
    },
    rename: (from, to) => {
      if (!exists(from)) throw fsError('ENOENT', 'rename', from);
      if (entry(to)?.isDirectory()) throw fsError('EISDIR', 'rename', to);
      writable(path.resolve(path.dirname(to)));
      files.delete(from);
      files.add(to);
    },
    unlink: (f) => {
      const e = entry(f);
      if (!e && !files.has(f)) throw fsError('ENOENT', 'unlink', f);
      if (e?.isDirectory()) throw fsError('EISDIR', 'unlink', f);
      writable(path.resolve(path.dirname(f)));
      files.delete(f);
    },
  };
}

/** The entry itself (a symlink is not followed), or undefined when there is none. */
function entry(f: string): fs.Stats | undefined {
  return fs.lstatSync(f, { throwIfNoEntry: false });
}

/** What the path leads to (symlinks followed), or undefined when nothing; ENOTDIR and the like are thrown. */
function stat(f: string): fs.Stats | undefined {
  return fs.statSync(f, { throwIfNoEntry: false });
}

/** The real file operations of install and uninstall (src/install/file-install.ts FileOps), and a dry run's. */
import * as fs from 'node:fs';
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

/** Reads as the real one does; changes nothing, and answers as if every change succeeded. */
export function dryRunFileOps(): FileOps {
  const real = realFileOps();
  return {
    read: real.read,
    list: (d) => {
      try {
        return real.list(d);
      } catch {
        return [];
      }
    },
    writeNew: () => undefined,
    rename: () => undefined,
    unlink: () => undefined,
    mkdirp: () => undefined,
  };
}

/** Locating the package (for the compiled CLI and the version string), from sources or from dist/. */
import * as fs from 'node:fs';
import * as path from 'node:path';

export function findPackageRoot(start: string = __dirname): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

export function packageVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(findPackageRoot(), 'package.json'), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/**
 * The packaged Linux executable: built on demand with `node scripts/package.js --target linux --if-stale`, which
 * does nothing when dist/hcn-cni is newer than its inputs (sources, addon, this node) and serializes parallel
 * callers. The Linux executable needs nothing beyond this machine's node and the addon build, so it is always
 * tested (no skipping).
 */
import { spawn, spawnSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

export const ROOT = path.resolve(__dirname, '../..');
export const EXE = path.join(ROOT, 'dist', 'hcn-cni');
export const BUNDLE = path.join(ROOT, 'dist', 'hcn-cni.bundle.js');
export const MANIFEST = path.join(ROOT, 'dist', 'hcn-cni.package.json');

/**
 * The name of the directory the loader extracts the addon and the client library to (`hcn-cni-<hash>`), computed here
 * from the built files the way src/hns/native.ts names it: the first 16 hex digits of SHA-256 over both.
 */
export function extractDirName(release = path.join(ROOT, 'build', 'Release')): string {
  const hash = crypto
    .createHash('sha256')
    .update(fs.readFileSync(path.join(release, 'hcn.node')))
    .update(fs.readFileSync(path.join(release, 'libhcnsim.so')))
    .digest('hex')
    .slice(0, 16);
  return `hcn-cni-${hash}`;
}

export function ensureLinuxPackage(): { ms: number; log: string } {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'package.js'), '--target', 'linux', '--if-stale'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 10 * 60_000,
  });
  if (r.status !== 0)
    throw new Error(`node scripts/package.js --target linux failed (${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
  return { ms: Date.now() - t0, log: r.stderr };
}

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a program with exactly this environment (plus PATH) and stdin, as a runtime would. */
export function run(file: string, args: string[], env: Record<string, string | undefined>, stdin = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      env: { PATH: process.env.PATH, ...env } as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

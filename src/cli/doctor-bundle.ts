/**
 * `hcn-cni doctor --bundle FILE`: one zip (fflate; Windows opens it natively) that a user attaches to an issue. It
 * holds the doctor's report and snapshot, every HNS object as HNS gives it (HCN's documents and HNSCall's), the state
 * directory's listing and records, the service's status and metrics, the last lines of the configured log, the CNI
 * configuration files with every secret replaced (src/doctor/redact.ts; a file that is not JSON is left out, since it
 * cannot be redacted field by field), and versions. It reads no environment and no other process's files. Each file
 * and the whole are bounded (what does not fit is named in MANIFEST.txt, with why); an existing FILE is never
 * overwritten (the zip is created with O_EXCL).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { zipSync } from 'fflate';
import { defaultConfDir } from '../cni/defaults';
import { withoutBom } from '../cni/json-text';
import { redact, redactJsonText } from '../doctor/redact';
import type { Finding } from '../doctor/finding';
import type { DoctorSnapshot } from '../doctor/snapshot';
import type { OpsContext } from './operator/context';
import { reportJson, renderFindings, serviceAddress } from './doctor-report';

export interface BundleLimits {
  /** Bytes of one file (a log's tail is cut to it; anything else larger is left out). */
  file: number;
  /** Bytes of every file together, before compression (the zip is smaller). */
  total: number;
  /** Lines of a log's tail. */
  logLines: number;
  /** Entries of the state directory's listing. */
  listing: number;
}

export const BUNDLE_LIMITS: BundleLimits = { file: 4 << 20, total: 32 << 20, logLines: 2000, listing: 20_000 };

export class Contents {
  readonly files: Record<string, Uint8Array> = {};
  readonly leftOut: string[] = [];
  private total = 0;
  constructor(private readonly limits: BundleLimits) {}

  add(name: string, text: string): void {
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.length > this.limits.file)
      return void this.leftOut.push(
        `${name}: ${bytes.length} bytes, over the ${this.limits.file}-byte limit of one file`,
      );
    if (this.total + bytes.length > this.limits.total)
      return void this.leftOut.push(`${name}: the bundle's ${this.limits.total}-byte limit is reached`);
    this.total += bytes.length;
    this.files[name] = bytes;
  }

  json(name: string, value: unknown): void {
    this.add(name, `${JSON.stringify(value, null, 2)}\n`);
  }

  note(name: string, why: string): void {
    this.leftOut.push(`${name}: ${why}`);
  }
}

export interface BundleReport {
  snapshot: DoctorSnapshot;
  findings: Finding[];
  exitCode: number;
  /** The service's address the doctor was given (--service): the bundle asks the same service, not the default. */
  service?: string;
}

export async function writeBundle(
  ctx: OpsContext,
  file: string,
  report: BundleReport,
  limits: BundleLimits = BUNDLE_LIMITS,
): Promise<{ ok: true; bytes: number; entries: number } | { ok: false; error: string }> {
  if (fs.existsSync(file)) return { ok: false, error: `${file} exists; refusing to overwrite it` };
  const c = new Contents(limits);
  c.json('report.json', { ...reportJson(report.findings, report.exitCode), snapshot: redact(report.snapshot) });
  c.add('report.txt', renderFindings(report.findings));
  await addHnsObjects(ctx, c);
  addState(ctx, c, limits);
  await addService(ctx, c, report.service);
  addLogTail(ctx, c, limits);
  addConfFiles(ctx, c);
  c.json('versions.json', versions(ctx, report.snapshot));
  const manifest = Object.entries(c.files).map(([n, b]) => `${n}\t${b.length}`);
  c.add(
    'MANIFEST.txt',
    [...manifest, '', 'left out:', ...(c.leftOut.length ? c.leftOut : ['nothing'])].join('\n') + '\n',
  );
  const zip = zipSync(c.files, { level: 6, mtime: new Date(report.snapshot.at) });
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx', 0o600);
  } catch (e) {
    return {
      ok: false,
      error: `${file}: ${(e as Error).message}${(e as NodeJS.ErrnoException).code === 'EEXIST' ? '; refusing to overwrite it' : ''}`,
    };
  }
  try {
    fs.writeSync(fd, zip);
  } catch (e) {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
    return { ok: false, error: `writing ${file}: ${(e as Error).message}` };
  }
  fs.closeSync(fd);
  return { ok: true, bytes: zip.length, entries: Object.keys(c.files).length };
}

/** Every HNS object, as HCN and as HNSCall give it (where the host has each). */
async function addHnsObjects(ctx: OpsContext, c: Contents): Promise<void> {
  let hcn;
  try {
    hcn = (await ctx.api()).api.hcn;
  } catch (e) {
    return c.note('hns/', `HNS could not be read: ${(e as Error).message.split('\n')[0]}`);
  }
  const reads: Array<[string, () => Promise<unknown>, boolean]> = [
    ['hns/v2-networks.json', () => hcn.listNetworks(), hcn.capabilities.v2Supported],
    ['hns/v2-endpoints.json', () => hcn.listEndpoints(), hcn.capabilities.v2Supported],
    ['hns/v2-namespaces.json', () => hcn.listNamespaces(), hcn.capabilities.v2Supported],
    ['hns/v1-networks.json', () => hcn.hnsCall('GET', '/networks/'), hcn.capabilities.v1Supported],
    ['hns/v1-endpoints.json', () => hcn.hnsCall('GET', '/endpoints/'), hcn.capabilities.v1Supported],
    ['hns/v1-namespaces.json', () => hcn.hnsCall('GET', '/namespaces/'), hcn.capabilities.v1Supported],
    ['hns/v1-policylists.json', () => hcn.hnsCall('GET', '/policylists/'), hcn.capabilities.v1Supported],
    ['hns/adapters.json', () => hcn.listAdapters(), true],
  ];
  for (const [name, read, available] of reads) {
    if (!available) continue;
    try {
      c.json(name, redact(await read()));
    } catch (e) {
      c.note(name, (e as Error).message.split('\n')[0]!);
    }
  }
}

/** The state directory: its listing (names, sizes, times) and its JSON files, redacted. */
function addState(ctx: OpsContext, c: Contents, limits: BundleLimits): void {
  const dir = ctx.conf.stateDir;
  if (!ctx.stateDirExists()) return c.note('state/', `the state directory ${dir} does not exist`);
  const listing: Array<{ path: string; bytes: number; modified: string; dir?: true }> = [];
  // Relative paths in one form, the zip's ('/'), on Windows too: a listing entry names its file in the bundle.
  const walk = (rel: string): void => {
    for (const d of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      if (listing.length >= limits.listing) return;
      const p = rel ? `${rel}/${d.name}` : d.name;
      const st = fs.lstatSync(path.join(dir, p));
      listing.push({
        path: p,
        bytes: st.size,
        modified: st.mtime.toISOString(),
        ...(d.isDirectory() ? { dir: true as const } : {}),
      });
      if (d.isDirectory()) walk(p);
      else if (d.isFile() && /\.json$/i.test(d.name)) {
        const text = st.size <= limits.file ? redactJsonText(fs.readFileSync(path.join(dir, p), 'utf8')) : undefined;
        if (text !== undefined) c.add(`state/files/${p}`, text);
        else
          c.note(
            `state/files/${p}`,
            st.size > limits.file ? 'too large' : 'not JSON (a torn write: see hcn-cni state)',
          );
      }
    }
  };
  walk('');
  c.json('state/listing.json', { stateDir: dir, entries: listing, complete: listing.length < limits.listing });
}

async function addService(ctx: OpsContext, c: Contents, given: string | undefined): Promise<void> {
  const { queryStatus } = await import('../service/transport/client');
  const address = await serviceAddress(ctx, given);
  let status;
  try {
    status = await queryStatus(address);
  } catch (e) {
    return c.json('service/status.json', { running: false, address, reason: (e as Error).message });
  }
  c.json('service/status.json', redact({ running: true, ...status }));
  if (status.metricsUrl) {
    try {
      const res = await fetch(status.metricsUrl, { signal: AbortSignal.timeout(10_000) });
      c.add('service/metrics.txt', await res.text());
    } catch (e) {
      c.note('service/metrics.txt', `${status.metricsUrl}: ${(e as Error).message}`);
    }
  }
}

/** The configured log's last lines (a path with a template, one file per pod, is not guessed at). */
function addLogTail(ctx: OpsContext, c: Contents, limits: BundleLimits): void {
  const log = ctx.conf.logFile;
  if (!log) return c.note('logs/', 'no logFile in the configuration');
  let fd: number;
  try {
    fd = fs.openSync(log, 'r');
  } catch (e) {
    return c.note('logs/', `${log}: ${(e as Error).message}`);
  }
  try {
    const size = fs.fstatSync(fd).size;
    const n = Math.min(size, limits.file);
    const buf = Buffer.alloc(n);
    fs.readSync(fd, buf, 0, n, size - n);
    const lines = buf.toString('utf8').split('\n');
    if (n < size) lines.shift(); // a cut first line
    const tail = lines.slice(-limits.logLines - 1).join('\n');
    c.add(`logs/${path.basename(log)}.tail`, redactLines(tail));
  } finally {
    fs.closeSync(fd);
  }
}

/** Log lines are JSON (pino): each one redacted as a document; another line only if it holds no token. */
function redactLines(text: string): string {
  return text
    .split('\n')
    .map((l) => (l.trim().startsWith('{') ? (redactJsonText(l)?.replace(/\n\s*/g, ' ').trim() ?? l) : l))
    .map((l) => (String(redact(l)) === l ? l : '<line redacted by hcn-cni doctor>'))
    .join('\n');
}

/** The CNI configuration directory's conf, conflist and json files, each redacted (or left out: not JSON). */
function addConfFiles(ctx: OpsContext, c: Contents): void {
  const dir = ctx.loaded.file ? path.dirname(ctx.loaded.file) : defaultConfDir(ctx.platform);
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => /\.(conflist|conf|json)$/i.test(n));
  } catch (e) {
    return c.note('conf/', `${dir}: ${(e as Error).message}`);
  }
  for (const n of names.sort()) {
    let text: string | undefined;
    try {
      text = redactJsonText(withoutBom(fs.readFileSync(path.join(dir, n), 'utf8')));
    } catch (e) {
      c.note(`conf/${n}`, (e as Error).message);
      continue;
    }
    if (text === undefined) c.note(`conf/${n}`, 'not JSON, so it cannot be redacted field by field: left out');
    else c.add(`conf/${n}`, text);
  }
}

function versions(ctx: OpsContext, s: DoctorSnapshot): Record<string, unknown> {
  let addon: unknown;
  try {
    addon = ctx.deps().hns.hcn(ctx.conf).capabilities;
  } catch (e) {
    addon = { error: (e as Error).message };
  }
  return { ...s.host, node: process.versions, os: { release: os.release(), version: os.version() }, addon };
}

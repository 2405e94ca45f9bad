/**
 * `--state FILE`: what survives a restart of the simulator process, as HNS's store survives a reboot — persistent
 * networks only (no EnableNonPersistent flag). Endpoints, namespaces and non-persistent networks are never written.
 * Writes are atomic (temp file + rename), so a killed simulator leaves the old or the new state, never half of one.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { NetworkObj } from './model';

interface StateDoc {
  version: 1;
  networks: NetworkObj[];
}

export class StateFile {
  private last = '';

  constructor(readonly file: string) {}

  load(): NetworkObj[] {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    const doc = JSON.parse(text) as StateDoc;
    if (doc?.version !== 1 || !Array.isArray(doc.networks)) throw new Error(`${this.file}: not an hcn-sim state file`);
    this.last = text;
    return doc.networks;
  }

  /** Writes the networks unless they are what the file already holds. */
  save(networks: NetworkObj[]): void {
    const text = JSON.stringify({ version: 1, networks } satisfies StateDoc, null, 1);
    if (text === this.last) return;
    const tmp = path.join(path.dirname(this.file), `.${path.basename(this.file)}.${process.pid}.tmp`);
    fs.writeFileSync(tmp, text, { mode: 0o600 });
    fs.renameSync(tmp, this.file);
    this.last = text;
  }
}

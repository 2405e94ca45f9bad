/**
 * What every operator command gets: the parsed arguments, the configuration, the writers, a logger (pino to stderr with
 * --verbose, else silent) and the plugin's dependencies (created on first use, so commands that need no addon load none).
 */
import * as fs from 'fs';
import type { ApiChoice } from '../../plugin/api-version';
import type { PluginDeps } from '../../plugin/deps';
import type { Logger } from '../../log/logger';
import type { NetConf } from '../../cni/types';
import type { OpsArgs } from './args';
import type { LoadedConf } from './conf';
import { ownerTags } from '../../orphans/ownership';

export interface OpsWriters {
  env: NodeJS.ProcessEnv;
  load: { addonPath?: string; libraryPath?: string };
  out(s: string): void;
  err(s: string): void;
}

export interface OpsEnvironment {
  platform: NodeJS.Platform;
  pid: number;
  now: () => number;
}

/** A failure the command has already explained: message only, no stack. exitCode defaults to 1. */
export class OpsError extends Error {
  override readonly name = 'OpsError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export class OpsContext {
  private pluginDeps: PluginDeps | undefined;
  private logger: Logger | undefined;

  constructor(
    readonly io: OpsWriters,
    readonly args: OpsArgs,
    readonly loaded: LoadedConf,
    readonly sys: OpsEnvironment,
  ) {}

  get conf(): NetConf {
    return this.loaded.conf;
  }

  get platform(): NodeJS.Platform {
    return this.sys.platform;
  }

  get log(): Logger {
    if (!this.logger) {
      if (this.args.verbose) {
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded synchronously on demand: start-up pays only for what is used
        const { createLogger } = require('../../log/logger') as typeof import('../../log/logger');
        this.logger = createLogger({ level: 'debug', base: { tool: 'hcn-cni', command: this.args.command } });
      } else {
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded synchronously on demand: start-up pays only for what is used
        this.logger = (require('../../log/logger') as typeof import('../../log/logger')).silentLogger;
      }
    }
    return this.logger;
  }

  /** The plugin's dependencies (src/plugin/deps.ts), made on first use. */
  deps(): PluginDeps {
    if (!this.pluginDeps) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded synchronously on demand: start-up pays only for what is used
      const { pluginDeps } = require('../../plugin/deps') as typeof import('../../plugin/deps');
      const load = this.io.load;
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded synchronously on demand: start-up pays only for what is used
      const { claimsDirFor } = require('../../cni/defaults') as typeof import('../../cni/defaults');
      const claimsDir = claimsDirFor(this.io.env, process.platform);
      this.pluginDeps = pluginDeps({
        pid: this.sys.pid,
        now: this.sys.now,
        ...(claimsDir ? { claimsDir } : {}),
        ...(load.addonPath || load.libraryPath ? { load } : {}),
      });
    }
    return this.pluginDeps;
  }

  /** The HNS API for this host under the configured apiVersion (asks HNS for its version on "auto"). */
  api(): Promise<ApiChoice> {
    return this.deps().hns.api(this.conf);
  }

  out(s: string): void {
    this.io.out(s);
  }

  json(value: unknown): void {
    this.io.out(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** The owners the state knows (records, intents, tombstones) by owner tag, for naming the owners of HNS objects. */
  knownOwners(): Map<string, { containerId: string; ifname: string; mac?: string }> {
    const out = new Map<string, { containerId: string; ifname: string; mac?: string }>();
    if (!this.stateDirExists()) return out;
    const state = this.deps().stores.store(this.conf, this.log).snapshot();
    for (const o of [...state.tombstones, ...state.intents, ...state.attachments] as Array<{
      containerId: string;
      ifname: string;
      mac?: string;
    }>) {
      for (const tag of ownerTags(o))
        out.set(tag, { containerId: o.containerId, ifname: o.ifname, ...(o.mac ? { mac: o.mac } : {}) });
    }
    return out;
  }

  stateDirExists(): boolean {
    try {
      return fs.statSync(this.conf.stateDir).isDirectory();
    } catch {
      return false;
    }
  }

  /**
   * Commands that delete refuse a state directory that does not exist: every object of ours would look like an
   * orphan there, so a mistyped --state-dir would take the network away from every pod on the node.
   */
  requireStateDir(doing: string): void {
    if (!this.stateDirExists()) {
      throw new OpsError(
        `the state directory ${this.conf.stateDir} does not exist; refusing to ${doing}: every hcn-cni object in HNS would look orphaned. ` +
          `Check --state-dir / --conf (configuration: ${this.loaded.source})${this.args.command === 'audit' ? ', or look first with --dry-run' : ''}.`,
      );
    }
  }
}

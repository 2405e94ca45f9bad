/**
 * runCni: the whole plugin as a function of {env, stdin} → {stdout, exitCode}. The CLI calls it for every
 * invocation; programs and tests can call it in process (`import { runCni } from 'hcn-cni'`).
 */
import { dispatch } from './cni/dispatch';
import type { LogLevel } from './cni/types';
import type { LoadOptions } from './hns/native';
import type { NativeHcn } from './hns/native-types';
import { createLogger, type Logger } from './log/logger';
import { pluginDeps, type PluginDeps } from './plugin/deps';
import { createHandlers, type HandlerOptions } from './plugin/handlers';
import type { CrashHook } from './state/atomic';

export interface RunCniOptions {
  env: Readonly<Record<string, string | undefined>>;
  stdin: Buffer | string;
  platform?: NodeJS.Platform;
  /** Where to find the addon and the HCN library (default: next to the package / inside the executable). */
  load?: LoadOptions;
  /** An already loaded addon. */
  native?: NativeHcn;
  /** Share the plugin's dependencies (addon handle, API choice, …: src/plugin/deps.ts) across calls in one process. */
  deps?: PluginDeps;
  /** Told of every verb's configuration (a resident service's record of what it serves). */
  onServed?: HandlerOptions['onServed'];
  /** The pid intents record (default: this process). */
  pid?: number;
  crash?: CrashHook;
  createLogger?: (options: { level: LogLevel; file?: string }) => Logger;
  defaults?: { stateDir?: string; logFile?: string };
  /** The node-wide register of live claims (default: HCN_CNI_CLAIMS_DIR, else the platform's, see defaultClaimsDir). */
  claimsDir?: string;
}

export interface RunCniResult {
  stdout: string;
  exitCode: number;
}

export { defaultStateDir } from './cni/defaults';
import { claimsDirFor, defaultStateDir } from './cni/defaults';

export function runCni(options: RunCniOptions): Promise<RunCniResult> {
  const platform = options.platform ?? process.platform;
  const claimsDir = options.claimsDir ?? claimsDirFor(options.env, platform);
  const deps =
    options.deps ??
    pluginDeps({
      pid: options.pid ?? process.pid,
      ...(claimsDir ? { claimsDir } : {}),
      ...(options.load ? { load: options.load } : {}),
      ...(options.native ? { native: options.native } : {}),
      ...(options.crash ? { crash: options.crash } : {}),
    });
  return dispatch(
    { env: options.env, stdin: Buffer.isBuffer(options.stdin) ? options.stdin : Buffer.from(options.stdin) },
    {
      handlers: createHandlers(deps, options.onServed ? { onServed: options.onServed } : {}),
      platform,
      defaults: {
        stateDir: options.defaults?.stateDir ?? defaultStateDir(platform),
        ...(options.defaults?.logFile ? { logFile: options.defaults.logFile } : {}),
      },
      createLogger: options.createLogger ?? ((o) => createLogger(o)),
    },
  );
}

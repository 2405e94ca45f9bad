/** The plugin as the CNI dispatcher sees it: each verb over the dependencies it names, all made once per process. */
import type { CniHandlers, ConfContext, VerbContext } from '../cni/types';
import { pluginDeps, type DepsOptions, type PluginDeps } from './deps';
import { verbGuard } from './to-cni-error';
import { add } from './verbs/add';
import { check } from './verbs/check';
import { del } from './verbs/del';
import { gc } from './verbs/gc';
import { status } from './verbs/status';

export interface HandlerOptions {
  /**
   * Told of every verb's configuration before it runs: a resident service keeps the latest per network and state
   * directory for its background work, as no request is there to bring one (src/service/served-configs.ts).
   */
  onServed?: (ctx: VerbContext | ConfContext) => void;
}

export function createHandlers(deps: PluginDeps | DepsOptions, options: HandlerOptions = {}): CniHandlers {
  const d = 'hns' in deps ? deps : pluginDeps(deps);
  const served = <C extends VerbContext | ConfContext>(ctx: C): C => (options.onServed?.(ctx), ctx);
  return {
    add: (ctx) => verbGuard('ADD', () => add(served(ctx), d)),
    del: (ctx) => verbGuard('DEL', () => del(served(ctx), d)),
    check: (ctx) => verbGuard('CHECK', () => check(served(ctx), d)),
    gc: (ctx) =>
      verbGuard('GC', async () => {
        await gc(served(ctx), d);
      }),
    status: (ctx) => verbGuard('STATUS', () => status(served(ctx), d)),
  };
}

/** The plugin as the CNI dispatcher sees it. */
import type { CniHandlers } from '../cni/types';
import { add } from './verbs/add';
import { check } from './verbs/check';
import { del } from './verbs/del';
import { verbGuard } from './to-cni-error';
import { gc } from './verbs/gc';
import { PluginRuntime, type RuntimeOptions } from './runtime';
import { status } from './verbs/status';

export function createHandlers(runtime: PluginRuntime | RuntimeOptions): CniHandlers {
  const rt = runtime instanceof PluginRuntime ? runtime : new PluginRuntime(runtime);
  // Every verb's configuration is remembered by its state directory: what a resident service's background work
  // (the audit on an interval, repair) runs with, as no request is there to bring one.
  return {
    add: (ctx) => verbGuard('ADD', () => add(rt.served(ctx), rt)),
    del: (ctx) => verbGuard('DEL', () => del(rt.served(ctx), rt)),
    check: (ctx) => verbGuard('CHECK', () => check(rt.served(ctx), rt)),
    gc: (ctx) =>
      verbGuard('GC', async () => {
        await gc(rt.served(ctx), rt);
      }),
    status: (ctx) => verbGuard('STATUS', () => status(rt.served(ctx), rt)),
  };
}

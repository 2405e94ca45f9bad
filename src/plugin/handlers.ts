/** The plugin as the CNI dispatcher sees it. */
import type { CniHandlers } from '../cni/types';
import { add } from './add';
import { check } from './check';
import { del } from './del';
import { verbGuard } from './to-cni-error';
import { gc } from './gc';
import { PluginRuntime, type RuntimeOptions } from './runtime';
import { status } from './status';

export function createHandlers(runtime: PluginRuntime | RuntimeOptions): CniHandlers {
  const rt = runtime instanceof PluginRuntime ? runtime : new PluginRuntime(runtime);
  return {
    add: (ctx) => verbGuard('ADD', () => add(ctx, rt)),
    del: (ctx) => verbGuard('DEL', () => del(ctx, rt)),
    check: (ctx) => verbGuard('CHECK', () => check(ctx, rt)),
    gc: (ctx) =>
      verbGuard('GC', async () => {
        await gc(ctx, rt);
      }),
    status: (ctx) => verbGuard('STATUS', () => status(ctx, rt)),
  };
}

/** The plugin as the CNI dispatcher sees it. */
import type { CniHandlers } from '../cni/types';
import { add } from './add';
import { check } from './check';
import { del } from './del';
import { gc } from './gc';
import { PluginRuntime, type RuntimeOptions } from './runtime';
import { status } from './status';

export function createHandlers(runtime: PluginRuntime | RuntimeOptions): CniHandlers {
  const rt = runtime instanceof PluginRuntime ? runtime : new PluginRuntime(runtime);
  return {
    add: (ctx) => add(ctx, rt),
    del: (ctx) => del(ctx, rt),
    check: (ctx) => check(ctx, rt),
    gc: async (ctx) => {
      await gc(ctx, rt);
    },
    status: (ctx) => status(ctx, rt),
  };
}

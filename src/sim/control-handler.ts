/**
 * Control requests (`{"v":1,"ctl":<command>,"args":{…}}`) dispatched to the engine. Command names and arguments
 * are listed in control-types.ts (SimControlCommands); control-client.ts sends them and the CLI's `ctl` maps its
 * arguments onto them.
 */
import type { RaceMode, SimAdapter } from './control-types';
import type { Engine } from './engine';
import { parseHresultArg } from './hresult-arg';
import { packageVersion } from './package-root';

type Args = Record<string, unknown>;

function num(args: Args, key: string, required = false): number | undefined {
  const v = args[key];
  if (v === undefined || v === null) {
    if (required) throw new Error(`missing argument ${key}`);
    return undefined;
  }
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new Error(`argument ${key} must be a number`);
  return n;
}

function str(args: Args, key: string, required = false): string | undefined {
  const v = args[key];
  if (v === undefined || v === null) {
    if (required) throw new Error(`missing argument ${key}`);
    return undefined;
  }
  if (typeof v !== 'string') throw new Error(`argument ${key} must be a string`);
  return v;
}

/** restart's dropNamespaces: true (all), or a list of namespace ids. */
function dropNamespacesArg(v: unknown): boolean | string[] | undefined {
  if (v === undefined || v === null || typeof v === 'boolean') return v ?? undefined;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  throw new Error('argument dropNamespaces must be true, false or a list of namespace ids');
}

export async function handleControl(engine: Engine, ctl: string, args: Args = {}): Promise<unknown> {
  switch (ctl) {
    case 'ping':
      return { pid: process.pid, version: packageVersion() };
    case 'latency':
      return engine.setLatency(str(args, 'op', true)!, num(args, 'ms', true)!);
    case 'fail':
      return engine.addFault('fail', str(args, 'op', true)!, {
        hresult: parseHresultArg(args.hresult),
        nth: num(args, 'nth'),
        count: num(args, 'count'),
        ...(args.afterCommit === true ? { afterCommit: true } : {}),
      });
    case 'hang':
      return engine.addFault('hang', str(args, 'op', true)!, {
        ms: num(args, 'ms'),
        nth: num(args, 'nth'),
        count: num(args, 'count'),
      });
    case 'release':
      return { released: engine.release(str(args, 'op')) };
    case 'kill-client':
      return engine.addFault('kill', str(args, 'op', true)!, { nth: num(args, 'nth'), count: num(args, 'count') });
    case 'race':
      return engine.setRace(str(args, 'mode', true) as RaceMode, num(args, 'seed'));
    case 'delete-with-endpoints':
      return engine.setDeleteNetworkWithEndpoints(str(args, 'mode', true) as 'cascade' | 'refuse');
    case 'restart':
      return engine.restart(num(args, 'downMs') ?? 0, dropNamespacesArg(args.dropNamespaces));
    case 'version': {
      const v2 = args.v2;
      if (v2 !== undefined && typeof v2 !== 'boolean') throw new Error('argument v2 must be a boolean');
      return engine.setVersion(num(args, 'major', true)!, num(args, 'minor', true)!, v2);
    }
    case 'adapter-add':
      return engine.addAdapter((args.adapter ?? args) as SimAdapter);
    case 'adapter-rm':
      return engine.removeAdapter(str(args, 'name', true)!);
    case 'container-add':
      return void engine.store.computeSystems.add(str(args, 'id', true)!);
    case 'container-rm':
      return engine.store.computeSystems.remove(str(args, 'id', true)!);
    case 'host':
      return structuredClone(engine.host);
    case 'dump':
      return engine.dump();
    case 'stats':
      return engine.stats();
    case 'calls':
      return engine.calls();
    case 'reset':
      return engine.reset(args.objects === undefined ? true : Boolean(args.objects));
    case 'wait-idle':
      return engine.waitIdle(num(args, 'timeoutMs'));
    default:
      throw new Error(`unknown control command ${JSON.stringify(ctl)}`);
  }
}

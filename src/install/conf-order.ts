/**
 * Which configuration containerd runs: the first of its conf directory by name. containerd's CRI loads the directory
 * through go-cni (`opts.go` loadFromConfDir: libcni's ConfFiles, then `sort.Strings`, and the first file is the
 * default network; `max_conf_num` is 1 by default), and libcni's ConfFiles
 * (containernetworking/cni `libcni/conf.go`) takes every entry that is not a directory whose extension is exactly
 * `.conf`, `.conflist` or `.json`. So another plugin's conflist that sorts before install's is the one containerd
 * runs — and one that does not parse stops containerd loading any. Pure: the names in, the ones before ours out.
 */
import { CONFLIST_NAME } from './plan';

const EXTENSIONS = ['.conf', '.conflist', '.json'];

/** The configuration files (not directories) that containerd reads before `ours`, in its order. */
export function sortsBefore(entries: ReadonlyArray<{ name: string; dir: boolean }>, ours = CONFLIST_NAME): string[] {
  const ext = (n: string) => (n.lastIndexOf('.') > 0 ? n.slice(n.lastIndexOf('.')) : '');
  // sort.Strings compares bytes; for the names of one directory that is UTF-8 order, which code points keep.
  const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
  return entries
    .filter((e) => !e.dir && EXTENSIONS.includes(ext(e.name)) && byBytes(e.name, ours) < 0)
    .map((e) => e.name)
    .sort(byBytes);
}

/** The warning install prints when containerd would run another configuration than hcn-cni's. */
export function shadowWarning(confDir: string, before: readonly string[], ours = CONFLIST_NAME): string | undefined {
  if (before.length === 0) return undefined;
  return `warning: containerd runs the first configuration of ${confDir} by name, and ${before.join(', ')} ${before.length === 1 ? 'sorts' : 'sort'} before ${ours}: containerd will not run hcn-cni for new pods until ${before.length === 1 ? 'it is' : 'they are'} removed or renamed to sort after it`;
}

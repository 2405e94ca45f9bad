/** Where things live on a node by default (documented in the README's configuration table). */

/** State directory (stateDir). */
export function defaultStateDir(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'C:\\ProgramData\\hcn-cni\\state' : '/var/lib/hcn-cni';
}

/** containerd's CNI configuration directory. */
export function defaultConfDir(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'C:\\etc\\cni\\net.d' : '/etc/cni/net.d';
}

/** containerd's CNI binary directory. */
export function defaultBinDir(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'C:\\opt\\cni\\bin' : '/opt/cni/bin';
}

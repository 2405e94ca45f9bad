/** Where things live on a node by default (documented in the README's configuration table). */

/** State directory (stateDir). */
export function defaultStateDir(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'C:\\ProgramData\\hcn-cni\\state' : '/var/lib/hcn-cni';
}

/**
 * containerd's CNI configuration directory when config.toml does not set conf_dir: on Windows
 * %ProgramFiles%\containerd\cni\conf (containerd internal/cri/config/config_windows.go).
 */
export function defaultConfDir(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'C:\\Program Files\\containerd\\cni\\conf' : '/etc/cni/net.d';
}

/** containerd's CNI binary directory when config.toml does not set bin_dir: %ProgramFiles%\containerd\cni\bin. */
export function defaultBinDir(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'C:\\Program Files\\containerd\\cni\\bin' : '/opt/cni/bin';
}

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

/**
 * The node-wide register of live claims (src/state/claims.ts), shared by every conflist whatever its stateDir.
 * Windows: one fixed place beside the default state. Elsewhere the plugin drives only the simulator, where "one node"
 * is one hcn-sim: there the register is used only when HCN_CNI_CLAIMS_DIR (or the embedder) names it — the test
 * harness gives each simulator its own.
 */
export function defaultClaimsDir(platform: NodeJS.Platform): string | undefined {
  return platform === 'win32' ? 'C:\\ProgramData\\hcn-cni\\claims' : undefined;
}

/**
 * The register every entry point uses: HCN_CNI_CLAIMS_DIR, else the platform's default. One home, because the three
 * entry points (a CNI verb, `serve`, the operator's tool) must meet in the same register: an ADD registered in one
 * that an audit of another does not read is unprotected (the service once left the default out, and on Windows its
 * audits of one state directory could delete the endpoint another state directory's ADD had just created).
 */
export function claimsDirFor(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string | undefined {
  return env.HCN_CNI_CLAIMS_DIR || defaultClaimsDir(platform);
}

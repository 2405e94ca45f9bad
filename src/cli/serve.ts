/**
 * `hcn-cni serve [--listen ADDRESS]`: the resident service behind the shim (src/service). It runs until SIGTERM,
 * SIGINT (or on Windows SIGBREAK/SIGHUP), then stops accepting, lets every accepted request finish (a verb is never cut short by a shutdown), and
 * exits 0. The address defaults to /run/hcn-cni/service.sock (Linux) or \\.\pipe\hcn-cni (Windows), or
 * HCN_CNI_SERVICE when set — the same address the shim uses.
 */
import { defaultServiceAddress } from '../service/client';
import { startService } from '../service/service';

export interface ServeIo {
  env: NodeJS.ProcessEnv;
  load: { addonPath?: string; libraryPath?: string };
  err(s: string): void;
}

export const SERVE_USAGE = `usage: hcn-cni serve [--listen ADDRESS]

Runs the hcn-cni service: the shim (hcn-cni in the CNI bin directory) sends each CNI request here and falls back to
hcn-cni-standalone when the service is not running. ADDRESS is a unix socket path (default
/run/hcn-cni/service.sock) or a Windows pipe name (default \\\\.\\pipe\\hcn-cni); HCN_CNI_SERVICE overrides the
default, as it does for the shim. Stops on SIGTERM/SIGINT after the requests in flight have finished.
`;

export async function serve(argv: readonly string[], io: ServeIo): Promise<number> {
  let address = io.env.HCN_CNI_SERVICE || defaultServiceAddress(process.platform);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--help' || a === '-h') {
      io.err(SERVE_USAGE);
      return 0;
    }
    if (a === '--listen' && argv[i + 1]) address = argv[++i]!;
    else if (a.startsWith('--listen=') && a.length > 9) address = a.slice(9);
    else {
      io.err(`hcn-cni serve: unexpected argument ${JSON.stringify(a)}\n${SERVE_USAGE}`);
      return 2;
    }
  }
  let service: Awaited<ReturnType<typeof startService>>;
  try {
    service = await startService({
      address,
      platform: process.platform,
      pid: process.pid,
      ...(process.platform !== 'win32' && typeof process.getuid === 'function' ? { allowUid: process.getuid() } : {}),
      load: io.load,
      ...(io.env.HCN_CNI_CLAIMS_DIR ? { claimsDir: io.env.HCN_CNI_CLAIMS_DIR } : {}),
    });
  } catch (e) {
    // A refusal to start (the address is taken or is not ours to replace, the addon cannot load) is one line for
    // the operator, not a stack trace.
    io.err(`hcn-cni serve: ${((e as Error)?.message ?? String(e)).split('\n')[0]}\n`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    // Windows has no SIGTERM: a console's Ctrl+Break and close arrive as SIGBREAK and SIGHUP.
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGBREAK', 'SIGHUP'] as const) process.once(signal, () => resolve());
  });
  await service.close();
  return 0;
}

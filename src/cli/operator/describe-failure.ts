/**
 * Turning a failure into a message an operator can act on. HNS being unreachable is said plainly, with what to check;
 * CNI errors keep their code and details; anything else is its message (the stack only with --verbose).
 */
import { CniError } from '../../cni/cni-error';
import { hcnCause, isUnreachable, type HcnError } from '../../hns/hcn-error';
import { HR, hresultHex } from '../../hns/hresults';
import { ConfError } from './conf';
import { OpsError } from './context';

export interface FailureContext {
  platform: NodeJS.Platform;
  /** HCN_SIM as the process sees it (off Windows). */
  hcnSim: string | undefined;
  verbose: boolean;
  /** The configured bound for each HNS call, to say how long we waited. */
  hnsTimeoutSeconds?: number;
}

/** One line (or a few) for stderr, without the "hcn-cni <command>:" prefix. */
export function describeFailure(e: unknown, ctx: FailureContext): string {
  const hcn = hcnCause(e);
  if (hcn && isUnreachable(hcn)) return unreachable(hcn, ctx);
  if (e instanceof OpsError || e instanceof ConfError) return e.message;
  if (e instanceof CniError) {
    const details = e.details && (ctx.verbose || !hcn) ? `\n  ${e.details.split('\n').join('\n  ')}` : '';
    return `${e.message} (CNI code ${e.code})${details}`;
  }
  if (hcn) return hcn.message;
  if (e instanceof Error) return ctx.verbose && e.stack ? e.stack : e.message;
  return String(e);
}

export function unreachable(e: HcnError, ctx: FailureContext): string {
  const said = typeof e.errorRecord?.Error === 'string' ? e.errorRecord.Error.trim() : '';
  const head =
    e.hresult === HR.ERROR_TIMEOUT
      ? `HNS did not answer${ctx.hnsTimeoutSeconds ? ` within ${ctx.hnsTimeoutSeconds}s` : ''}: ${e.code} (${hresultHex(e.hresult)}) from ${e.op}`
      : `HNS is not reachable: ${e.code} (${hresultHex(e.hresult)}) from ${e.op}${said ? `: ${said}` : ''}`;
  const hint =
    ctx.platform === 'win32'
      ? 'is the hns service running? (Get-Service hns; Restart-Service hns)'
      : `is the hns service running? Off Windows hcn-cni talks to the HNS simulator: is hcn-sim running, and does HCN_SIM point at it? (HCN_SIM=${
          ctx.hcnSim === undefined ? 'unset' : JSON.stringify(ctx.hcnSim)
        })`;
  return `${head}\n  ${hint}`;
}

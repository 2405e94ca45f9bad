/**
 * A failed HNS operation: an HRESULT plus the error record HNS hands back. The record is the exact shape HNS writes,
 * `{"Success":false,"Error":"<message> ","ErrorCode":<unsigned>}`, with the trailing space FormatMessage leaves
 * (fields: MicrosoftDocs/Virtualization-Documentation virtualization/api/hcn/HNS_Schema.md "Response"; read by
 * microsoft/hcsshim hcn/hcnerrors.go checkForErrors); the messages come from the shared table in src/hns/hresults.ts.
 * The trailing space is our reconstruction of FormatMessage's output, not captured from HNS.
 */
import { describeHresult, hresultHex, toUnsigned } from '../hns/hresults';

export class SimError extends Error {
  override readonly name = 'SimError';
  readonly hresult: number;

  /** `detail` is for logs only; HNS's error record carries just the table message. */
  constructor(
    hresult: number,
    readonly detail?: string,
  ) {
    super(`${hresultHex(hresult)} ${describeHresult(hresult).message}${detail ? ` (${detail})` : ''}`);
    this.hresult = toUnsigned(hresult);
  }
}

export function errorRecordObject(hresult: number): { Success: false; Error: string; ErrorCode: number } {
  return { Success: false, Error: `${describeHresult(hresult).message} `, ErrorCode: toUnsigned(hresult) };
}

export function errorRecord(hresult: number): string {
  return JSON.stringify(errorRecordObject(hresult));
}

/** Shorthand for throwing inside validation code. */
export function fail(hresult: number, detail?: string): never {
  throw new SimError(hresult, detail);
}

/**
 * The result document HCS fills in when a compute-system call fails: microsoft/hcsshim internal/hcs/errors.go
 * hcsResult {Error int32, ErrorMessage string, ErrorEvents []ErrorEvent}.
 */
export function hcsResult(hresult: number): string {
  const message = describeHresult(hresult).message;
  return JSON.stringify({
    Error: toUnsigned(hresult) | 0,
    ErrorMessage: message,
    ErrorEvents: [{ Message: message, Provider: 'hcn-sim' }],
  });
}

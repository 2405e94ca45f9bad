/** An HRESULT given by a person or a test: 0x803B0006, 2151350278, or a symbolic name (HCN_E_ADAPTER_NOT_FOUND). */
import { hresultOf } from '../hns/hresults';

export function parseHresultArg(v: unknown): number {
  if (typeof v === 'number' && Number.isInteger(v)) return v >>> 0;
  if (typeof v === 'string') {
    const s = v.trim();
    if (/^0x[0-9a-f]{1,8}$/i.test(s)) return parseInt(s, 16) >>> 0;
    if (/^-?\d+$/.test(s)) return Number(s) >>> 0;
    return hresultOf(s.toUpperCase());
  }
  throw new Error(`not an HRESULT: ${JSON.stringify(v)}`);
}

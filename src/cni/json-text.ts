/**
 * JSON as Windows tools write it: a leading byte-order mark (Notepad, Windows PowerShell 5.1's
 * `Set-Content -Encoding UTF8`) is not JSON (RFC 8259 §8.1: parsers MAY ignore it; JSON.parse does not), so it is
 * dropped before parsing. One home for every reader of a configuration: conflists, stdin, the service's requests and
 * the doctor's bundle.
 */
export function withoutBom(text: string): string {
  return text.replace(/^\uFEFF/, '');
}

export function parseJsonText(text: string): unknown {
  return JSON.parse(withoutBom(text));
}

/**
 * What a support bundle may not carry: secrets in configuration documents. Every value under a key named like a
 * secret (token, password, secret, credential, a private key, a kubeconfig — whose contents are never read, and
 * whose path says where credentials lie) is replaced, and so is any string that looks like a bearer token (a JWT:
 * a Kubernetes service-account token) wherever it sits. A document that is not JSON cannot be redacted field by
 * field, so the caller leaves it out.
 */
export const REDACTED = '<redacted by hcn-cni doctor>';

const SECRET_KEY = /token|passw(or)?d|secret|credential|private.?key|api.?key|kubeconfig|auth/i;
/** Three base64url parts, the first a JSON header ("eyJ"): RFC 7519's compact form. */
const JWT = /eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/;

export function redact(value: unknown): unknown {
  if (typeof value === 'string') return JWT.test(value) ? REDACTED : value;
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY.test(k) ? REDACTED : redact(v);
  return out;
}

/** A JSON document's text, redacted, or undefined when it is not JSON (then it stays out of the bundle). */
export function redactJsonText(text: string): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  return `${JSON.stringify(redact(doc), null, 2)}\n`;
}

/**
 * The node's pod CIDRs from the Kubernetes API, read with the pod's service account: GET /api/v1/nodes/NAME with
 * the account's bearer token, the server checked against the account's ca.crt (what kubelet mounts at
 * /var/run/secrets/kubernetes.io/serviceaccount; a HostProcess container sees it under
 * %CONTAINER_SANDBOX_MOUNT_POINT%). `spec.podCIDRs` (dual-stack) is preferred to `spec.podCIDR` (Kubernetes API
 * `core/v1` NodeSpec). http:// is accepted too (an API server proxy, a test's fake on 127.0.0.1). Every failure is
 * one InstallRefusal line that says what to set instead.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { InstallRefusal } from './refusal';

export interface NodeApiRequest {
  /** https://HOST:PORT (or http://) of the API server. */
  server: string;
  node: string;
  token: string;
  /** PEM of the CA the server's certificate must chain to (https only). */
  ca?: string;
  timeoutMs: number;
}

const HINT = 'set --pod-cidr (POD_SUBNET in the DaemonSet), or --api-server when the API server is reached otherwise';

/** The node's URL on the API server (https:// or http://), or a refusal. */
function nodeUrl(req: NodeApiRequest): URL {
  let url: URL;
  try {
    url = new URL(`/api/v1/nodes/${encodeURIComponent(req.node)}`, req.server);
  } catch {
    throw new InstallRefusal(`the API server address ${JSON.stringify(req.server)} is not a URL; ${HINT}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new InstallRefusal(`the API server address ${req.server} is neither https:// nor http://`);
  return url;
}

/** GET the node: its body on 200 (at most 4 MiB, within timeoutMs); any other answer or failure a refusal. */
async function getNode(req: NodeApiRequest, url: URL): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const mod = url.protocol === 'https:' ? https : http;
    const r = mod.get(
      url,
      {
        headers: { Authorization: `Bearer ${req.token}`, Accept: 'application/json' },
        timeout: req.timeoutMs,
        ...(url.protocol === 'https:' && req.ca !== undefined ? { ca: req.ca } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > 4 * 1024 * 1024) r.destroy(new Error('the answer is larger than 4 MiB'));
          else chunks.push(c);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode === 200) resolve(text);
          else
            reject(
              new InstallRefusal(
                `the API server answered ${res.statusCode} ${res.statusMessage ?? ''} for node ${req.node}${
                  res.statusCode === 403 ? ' (the service account needs "get" on nodes)' : ''
                }; ${HINT}`.replace(/ +;/, ';'),
              ),
            );
        });
        res.on('error', reject);
      },
    );
    r.on('timeout', () => r.destroy(new Error(`no answer within ${req.timeoutMs} ms`)));
    r.on('error', reject);
  }).catch((e: unknown) => {
    if (e instanceof InstallRefusal) throw e;
    throw new InstallRefusal(`could not read node ${req.node} from ${url.origin}: ${(e as Error).message}; ${HINT}`);
  });
}

export async function readNodePodCidrs(req: NodeApiRequest): Promise<string[]> {
  const url = nodeUrl(req);
  const body = await getNode(req, url);
  let node: { spec?: { podCIDR?: unknown; podCIDRs?: unknown } };
  try {
    node = JSON.parse(body) as typeof node;
  } catch {
    throw new InstallRefusal(`node ${req.node} from ${url.origin} is not JSON; ${HINT}`);
  }
  const list = node.spec?.podCIDRs;
  const cidrs =
    Array.isArray(list) && list.length > 0 && list.every((c) => typeof c === 'string')
      ? (list as string[])
      : typeof node.spec?.podCIDR === 'string' && node.spec.podCIDR !== ''
        ? [node.spec.podCIDR]
        : [];
  if (cidrs.length === 0)
    throw new InstallRefusal(
      `node ${req.node} has no spec.podCIDR (the controller manager allocates it with --allocate-node-cidrs); ${HINT}`,
    );
  return cidrs;
}

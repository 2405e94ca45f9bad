/**
 * A pod whose service has handed the address over never serves it again. In a DaemonSet's rolling update the old
 * pod's service hands over to the new pod's and stays, serving nothing, until the controller deletes its pod
 * (--stay-after-hand-over). Should it die before that, the kubelet restarts its container (restartPolicy Always), and
 * the restarted service, the old version, would take the address back: the new pod would never become ready, and the
 * update would wait for someone to delete the old pod by hand. So a service that hands over notes its pod
 * (HCN_CNI_POD_UID) here, and a later service of that pod does not take the address from a service that serves it.
 * When nothing serves the address, it starts as any service would and forgets the note: a node is never left without
 * a service because of one.
 *
 * Where: Linux, beside the socket (under /run by default, gone at a reboot as the pods' containers are); Windows,
 * %ProgramData%\hcn-cni\retired-pods (the pipe has no directory). One empty file per pod, named by its UID.
 */
import * as fs from 'fs';
import * as path from 'path';

export function retiredPodsDir(address: string, platform: NodeJS.Platform): string {
  return platform === 'win32'
    ? 'C:\\ProgramData\\hcn-cni\\retired-pods'
    : path.join(path.dirname(address), 'retired-pods');
}

/** A pod UID as a file name: Kubernetes' UIDs are UUIDs; anything else is not noted (and never found). */
function fileOf(dir: string, pod: string): string | undefined {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(pod) ? path.join(dir, pod) : undefined;
}

/** Notes that `pod`'s service handed over; the reason it could not, or undefined. */
export function noteRetired(dir: string, pod: string): string | undefined {
  const file = fileOf(dir, pod);
  if (!file) return `the pod UID ${JSON.stringify(pod)} is not a file name`;
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, '');
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

export function isRetired(dir: string, pod: string): boolean {
  const file = fileOf(dir, pod);
  return file !== undefined && fs.existsSync(file);
}

export function forgetRetired(dir: string, pod: string): void {
  const file = fileOf(dir, pod);
  if (file) fs.rmSync(file, { force: true });
}

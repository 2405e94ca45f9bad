/**
 * "Intent before IPAM": the ADD writes its intent before it asks the delegated IPAM for an address, so a process
 * killed right after the allocation leaves a trace that DEL and GC release the address by (IPAM DEL is idempotent).
 * A probe IPAM on CNI_PATH records which intents are on disk at the moment it is asked to allocate. In-process and
 * fast: the crash-point matrix covers the same rule by killing processes, in a minute.
 */
import * as fs from 'fs';
import * as path from 'path';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { newNamespace } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

/** An IPAM plugin that lists the state's intents into `seen` when it allocates. */
function probeIpam(seen: string): string {
  const bin = path.join(h.tmp, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  const script = [
    '#!/bin/sh',
    'cat > /dev/null',
    'case "$CNI_COMMAND" in',
    `  ADD) ls ${JSON.stringify(path.join(h.stateDir, 'intents'))} > ${JSON.stringify(seen)} 2>/dev/null || : > ${JSON.stringify(seen)}`,
    `       echo '{"cniVersion":"1.1.0","ips":[{"address":"10.244.1.9/24","gateway":"10.244.1.1"}]}' ;;`,
    `  VERSION) echo '{"cniVersion":"1.1.0","supportedVersions":["0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]}' ;;`,
    'esac',
    '',
  ].join('\n');
  fs.writeFileSync(path.join(bin, 'probe-ipam'), script, { mode: 0o755 });
  return bin;
}

it('the intent is on disk when the delegated IPAM allocates', async () => {
  const seen = path.join(h.tmp, 'seen');
  const bin = probeIpam(seen);
  const conf = bridgeConf({ cniVersion: '1.1.0', ipam: { type: 'probe-ipam' } });
  const add = await cni(h, { verb: 'ADD', conf, containerId: 'pod-i', netns: await newNamespace(h), path: bin });
  expect(add.exitCode).toBe(0);
  expect(add.json).toMatchObject({ ips: [{ address: '10.244.1.9/24' }] });
  expect(fs.readFileSync(seen, 'utf8').split('\n').filter(Boolean)).toEqual(['pod-i@eth0.json']);
});

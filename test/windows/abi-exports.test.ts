/**
 * The stand-in DLLs' export tables: computenetwork.dll exports every function of mingw-w64's
 * computenetwork.h plus the SDN-route functions and the simulator's adapter listing, nothing else of ours; vmcompute.dll
 * exports HNSCall and the HCS functions of hcsshim's open/properties/modify/close path. Read from the PE export
 * table with x86_64-w64-mingw32-objdump -p (the DLLs come from the Windows build, scripts/package.js).
 */
import { spawnSync } from 'child_process';
import * as path from 'path';
import { COMPUTENETWORK_EXTRAS, VMCOMPUTE_EXPORTS, headerFunctions } from '../hns/abi-list';
import { describeWine } from './helpers/wine';

function peExports(dll: string): string[] {
  const dump = spawnSync('x86_64-w64-mingw32-objdump', ['-p', dll], { encoding: 'utf8' });
  if (dump.status !== 0) throw new Error(`objdump -p ${dll} failed: ${dump.stderr}`);
  const table = dump.stdout.split('[Ordinal/Name Pointer] Table')[1] ?? '';
  const names: string[] = [];
  for (const line of table.split('\n').slice(1)) {
    const m = /^\s*\[\s*\d+\]\s+(\S+)\s*$/.exec(line);
    if (!m) break;
    names.push(m[1]!);
  }
  return names.sort();
}

describeWine('the stand-in DLLs export the whole ABI', (build) => {
  test('computenetwork.dll: computenetwork.h, the SDN-route functions and HcnSimEnumerateAdapters', () => {
    const expected = [...headerFunctions(), ...COMPUTENETWORK_EXTRAS].sort();
    expect(peExports(path.join(build.winDir, 'computenetwork.dll'))).toEqual(expected);
  });

  test("vmcompute.dll: HNSCall and the HCS functions of hcsshim's compute-system path", () => {
    expect(peExports(path.join(build.winDir, 'vmcompute.dll'))).toEqual([...VMCOMPUTE_EXPORTS].sort());
  });
});

/**
 * The function list's sdk column (native/include/hcn_functions.h) is the truth: the win build checks a function's
 * signature against the SDK only where the list says SDK, so a function the SDK does declare must never be marked
 * NO_SDK (that would drop its compile-time check silently), and one marked SDK must be declared there (or the win
 * build fails to compile, later and on another machine). mingw-w64's headers stand for the SDK, as in the cross build.
 */
import * as fs from 'fs';
import * as path from 'path';

import { HEADER } from '../hns/abi-list';
import { HCN_FUNCTION_TABLE } from '../helpers/hcn-functions';

const INCLUDE = path.dirname(HEADER);
/** The headers hcn_library_win.cc checks against: computenetwork.h, and objbase.h's CoTaskMemFree (combaseapi.h). */
const SDK_TEXT = ['computenetwork.h', 'objbase.h', 'combaseapi.h']
  .map((f) => path.join(INCLUDE, f))
  .filter((f) => fs.existsSync(f))
  .map((f) => fs.readFileSync(f, 'utf8'))
  .join('\n');

/** `HRESULT WINAPI Name (`, or combaseapi.h's `WINOLEAPI_ (void) CoTaskMemFree (`. */
const declared = (name: string): boolean =>
  new RegExp(`(?:\\bWINAPI|\\bWINOLEAPI_\\s*\\(\\w+\\))\\s+${name}\\s*\\(`).test(SDK_TEXT);

const skip = fs.existsSync(HEADER) ? test : test.skip;

skip('every function of the list marked SDK is declared by the SDK headers, and none marked NO_SDK is', () => {
  const wrong = HCN_FUNCTION_TABLE.filter((f) => declared(f.name) !== f.sdk).map(
    (f) => `${f.name}: marked ${f.sdk ? 'SDK' : 'NO_SDK'}`,
  );
  expect(wrong).toEqual([]);
});

test('the list is read whole: every entry parsed, names unique', () => {
  const text = fs.readFileSync(path.join(__dirname, '..', '..', 'native', 'include', 'hcn_functions.h'), 'utf8');
  const entries = [...text.matchAll(/\bX\(\s*k\w+/g)].length;
  expect(HCN_FUNCTION_TABLE.length).toBe(entries);
  expect(new Set(HCN_FUNCTION_TABLE.map((f) => f.name)).size).toBe(entries);
});

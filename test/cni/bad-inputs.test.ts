/**
 * Bad inputs: each must produce its CNI code and a message naming the problem, in error JSON on stdout with exit
 * code 1, and must stop before the handler (and before IPAM) is reached.
 */
import { CniCode } from '../../src/cni/cni-error';
import { baseConf, baseEnv, invoke } from './helpers';

interface Case {
  name: string;
  env: Record<string, string | undefined>;
  stdin?: Buffer | string | Record<string, unknown>;
  code: number;
  msg: RegExp | string;
}

const conf10 = baseConf('1.0.0');
const deep = (extra: Record<string, unknown>, v = '1.0.0') => baseConf(v, extra);

const cases: Case[] = [
  // Environment (code 4).
  { name: 'no CNI_COMMAND', env: {}, stdin: conf10, code: 4, msg: 'required env variables [CNI_COMMAND] missing' },
  {
    name: 'unknown CNI_COMMAND',
    env: baseEnv('ADDX'),
    stdin: conf10,
    code: 4,
    msg: /^unknown CNI_COMMAND "ADDX"; expected one of ADD, DEL, CHECK, VERSION, GC, STATUS$/,
  },
  { name: 'lower-case verb', env: baseEnv('add'), stdin: conf10, code: 4, msg: /unknown CNI_COMMAND "add"/ },
  {
    name: 'ADD without CNI_CONTAINERID and CNI_NETNS',
    // Unset, not empty: an empty CNI_NETNS is a Docker-style sandbox (like "none").
    env: baseEnv('ADD', { CNI_CONTAINERID: undefined, CNI_NETNS: undefined }),
    stdin: conf10,
    code: 4,
    msg: 'required env variables [CNI_CONTAINERID, CNI_NETNS] missing for ADD',
  },
  {
    name: 'CHECK without CNI_NETNS',
    env: baseEnv('CHECK', { CNI_NETNS: undefined }),
    stdin: deep({}, '0.4.0'),
    code: 4,
    msg: /\[CNI_NETNS\] missing for CHECK/,
  },
  {
    name: 'DEL without CNI_IFNAME',
    env: baseEnv('DEL', { CNI_IFNAME: undefined }),
    stdin: conf10,
    code: 4,
    msg: /\[CNI_IFNAME\] missing for DEL/,
  },
  {
    name: 'ADD without CNI_PATH',
    env: baseEnv('ADD', { CNI_PATH: undefined }),
    stdin: conf10,
    code: 4,
    msg: /\[CNI_PATH\] missing for ADD/,
  },
  {
    name: 'GC without CNI_PATH',
    env: { CNI_COMMAND: 'GC' },
    stdin: deep({ 'cni.dev/valid-attachments': [] }, '1.1.0'),
    code: 4,
    msg: /\[CNI_PATH\] missing for GC/,
  },
  {
    name: 'container id with "/"',
    env: baseEnv('ADD', { CNI_CONTAINERID: 'abc/../../etc' }),
    stdin: conf10,
    code: 4,
    msg: /^invalid CNI_CONTAINERID "abc\/..\/..\/etc": must start with a letter or digit/,
  },
  {
    name: 'container id with "\\"',
    env: baseEnv('DEL', { CNI_CONTAINERID: 'abc\\def' }),
    stdin: conf10,
    code: 4,
    msg: /invalid CNI_CONTAINERID/,
  },
  {
    name: 'container id starting with "."',
    env: baseEnv('ADD', { CNI_CONTAINERID: '..' }),
    stdin: conf10,
    code: 4,
    msg: /invalid CNI_CONTAINERID "\.\."/,
  },
  {
    name: 'container id with ":"',
    env: baseEnv('ADD', { CNI_CONTAINERID: 'C:evil' }),
    stdin: conf10,
    code: 4,
    msg: /invalid CNI_CONTAINERID/,
  },
  {
    name: 'ifname with "/"',
    env: baseEnv('ADD', { CNI_IFNAME: 'eth0/x' }),
    stdin: conf10,
    code: 4,
    msg: /^invalid CNI_IFNAME "eth0\/x": must be 1 to 64/,
  },
  {
    name: 'ifname ".."',
    env: baseEnv('ADD', { CNI_IFNAME: '..' }),
    stdin: conf10,
    code: 4,
    msg: /invalid CNI_IFNAME "\.\."/,
  },
  {
    name: 'ifname with a space',
    env: baseEnv('DEL', { CNI_IFNAME: 'eth 0' }),
    stdin: conf10,
    code: 4,
    msg: /invalid CNI_IFNAME/,
  },
  {
    name: 'ifname of 65 characters',
    env: baseEnv('ADD', { CNI_IFNAME: 'e'.repeat(65) }),
    stdin: conf10,
    code: 4,
    msg: /invalid CNI_IFNAME/,
  },
  {
    name: 'malformed CNI_ARGS',
    env: baseEnv('ADD', { CNI_ARGS: 'K8S_POD_NAMESPACE=default;K8S_POD_NAME' }),
    stdin: conf10,
    code: 4,
    msg: 'invalid CNI_ARGS pair "K8S_POD_NAME": expected KEY=VALUE pairs separated by ";"',
  },

  // stdin (code 6).
  {
    name: 'malformed JSON',
    env: baseEnv('ADD'),
    stdin: '{"cniVersion": "1.0.0", "name": ',
    code: 6,
    msg: /^failed to decode the network configuration: /,
  },
  { name: 'a JSON list', env: baseEnv('ADD'), stdin: '[1,2]', code: 6, msg: /expected a JSON object, got \[1,2\]/ },
  { name: 'JSON null', env: baseEnv('DEL'), stdin: 'null', code: 6, msg: /expected a JSON object, got null/ },
  { name: 'empty stdin', env: baseEnv('ADD'), stdin: '', code: 6, msg: /stdin is empty/ },
  {
    name: 'stdin over 1 MiB',
    env: baseEnv('ADD'),
    stdin: JSON.stringify(baseConf('1.0.0', { pad: 'x'.repeat(1024 * 1024) })),
    code: 6,
    msg: /^stdin is 1048\d{3} bytes; the network configuration may be at most 1048576 bytes \(1 MiB\)$/,
  },
  {
    name: 'invalid UTF-8',
    env: baseEnv('ADD'),
    stdin: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]),
    code: 6,
    msg: /not valid UTF-8/,
  },
  {
    name: 'cniVersion that is a number',
    env: baseEnv('ADD'),
    stdin: { cniVersion: 1, name: 'n', type: 't' },
    code: 6,
    msg: '"cniVersion" must be a string, got 1',
  },
  {
    name: 'malformed prevResult',
    env: baseEnv('DEL'),
    stdin: deep({ prevResult: { ips: [{ address: '10.0.0.5' }] } }),
    code: 6,
    msg: 'failed to decode prevResult: "prevResult.ips[0].address" must be an IP address in CIDR form, got "10.0.0.5"',
  },
  {
    name: 'prevResult that is a list',
    env: baseEnv('CHECK'),
    stdin: deep({ prevResult: [] }),
    code: 6,
    msg: /failed to decode prevResult: "prevResult" must be an object/,
  },

  // Versions (code 1).
  {
    name: 'unknown version',
    env: baseEnv('ADD'),
    stdin: deep({ cniVersion: '0.5.0' }),
    code: 1,
    msg: 'incompatible CNI version "0.5.0"; this plugin supports 0.1.0, 0.2.0, 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0',
  },
  {
    name: 'future version',
    env: baseEnv('ADD'),
    stdin: deep({ cniVersion: '1.2.0' }),
    code: 1,
    msg: /incompatible CNI version "1.2.0"/,
  },
  {
    name: 'version that is not exact',
    env: baseEnv('ADD'),
    stdin: deep({ cniVersion: '1.0' }),
    code: 1,
    msg: /incompatible CNI version "1.0"/,
  },
  {
    name: 'CHECK without cniVersion (0.1.0)',
    env: baseEnv('CHECK'),
    stdin: { name: 'n', type: 't' },
    code: 1,
    msg: 'incompatible CNI version: CHECK needs cniVersion 0.4.0 or later, got "0.1.0"',
  },
  {
    name: 'GC at 0.2.0',
    env: { CNI_COMMAND: 'GC', CNI_PATH: '/opt/cni/bin' },
    stdin: deep({}, '0.2.0'),
    code: 1,
    msg: 'incompatible CNI version: GC needs cniVersion 1.1.0 or later, got "0.2.0"',
  },
  {
    name: 'CHECK at 0.3.1',
    env: baseEnv('CHECK'),
    stdin: deep({}, '0.3.1'),
    code: 1,
    msg: 'incompatible CNI version: CHECK needs cniVersion 0.4.0 or later, got "0.3.1"',
  },
  {
    name: 'GC at 1.0.0',
    env: { CNI_COMMAND: 'GC', CNI_PATH: '/opt/cni/bin' },
    stdin: deep({ 'cni.dev/valid-attachments': [] }),
    code: 1,
    msg: 'incompatible CNI version: GC needs cniVersion 1.1.0 or later, got "1.0.0"',
  },
  {
    name: 'STATUS at 0.4.0',
    env: { CNI_COMMAND: 'STATUS' },
    stdin: deep({}, '0.4.0'),
    code: 1,
    msg: /STATUS needs cniVersion 1.1.0 or later/,
  },

  // Configuration (code 7 / 2).
  {
    name: 'keys differing only by case',
    env: baseEnv('ADD'),
    stdin: deep({ mtu: 1500, MTU: 1400 }),
    code: 7,
    msg: 'invalid network configuration: keys "mtu" and "MTU" in the top level differ only by case',
  },
  {
    name: 'nested keys differing only by case',
    env: baseEnv('ADD'),
    stdin: deep({ dns: { search: ['a'], Search: ['b'] } }),
    code: 7,
    msg: /keys "search" and "Search" in "dns" differ only by case/,
  },
  {
    name: 'cniVersion given twice',
    env: baseEnv('ADD'),
    stdin: deep({ CNIVersion: '0.4.0' }),
    code: 7,
    msg: /keys "cniVersion" and "CNIVersion"/,
  },
  {
    name: 'missing name',
    env: baseEnv('ADD'),
    stdin: { cniVersion: '1.0.0', type: 't' },
    code: 7,
    msg: /^invalid network configuration: "name" must be a letter or digit followed by .*, got nothing$/,
  },
  {
    name: 'name with a path separator',
    env: baseEnv('ADD'),
    stdin: deep({ name: 'a/b' }),
    code: 7,
    msg: /"name" must be .*, got "a\/b"/,
  },
  {
    name: 'missing type',
    env: baseEnv('DEL'),
    stdin: { cniVersion: '1.0.0', name: 'n' },
    code: 7,
    msg: 'invalid network configuration: "type" must be a non-empty string, got nothing',
  },
  {
    name: 'mtu that is not a number',
    env: baseEnv('ADD'),
    stdin: deep({ mtu: 'abc' }),
    code: 7,
    msg: 'invalid network configuration: "mtu" must be an integer from 576 to 9000, got "abc"',
  },
  {
    name: 'createNetwork that is a string',
    env: baseEnv('ADD'),
    stdin: deep({ createNetwork: 'yes' }),
    code: 7,
    msg: '"createNetwork" must be true or false, got "yes"',
  },
  {
    name: 'dns that is a string',
    env: baseEnv('ADD'),
    stdin: deep({ dns: '10.0.0.10' }),
    code: 7,
    msg: '"dns" must be an object, got "10.0.0.10"',
  },
  {
    name: 'ipam.type with "/"',
    env: baseEnv('ADD'),
    stdin: deep({ ipam: { type: '/usr/bin/evil' } }),
    code: 7,
    msg: 'invalid network configuration: "ipam.type" must be a plain executable name (no "/", "\\", "..", ":" or NUL), got "/usr/bin/evil"',
  },
  {
    name: 'ipam.type with ".."',
    env: baseEnv('ADD'),
    stdin: deep({ ipam: { type: '..' } }),
    code: 7,
    msg: /"ipam.type" must be a plain executable name/,
  },
  {
    name: 'ipam.type with "\\"',
    env: baseEnv('ADD'),
    stdin: deep({ ipam: { type: 'bin\\host-local' } }),
    code: 7,
    msg: /"ipam.type"/,
  },
  {
    name: 'ipam.type with a drive',
    env: baseEnv('ADD'),
    stdin: deep({ ipam: { type: 'C:host-local.exe' } }),
    code: 7,
    msg: /"ipam.type"/,
  },
  {
    name: 'ipam.type with NUL',
    env: baseEnv('ADD'),
    stdin: deep({ ipam: { type: 'host-local\u0000.exe' } }),
    code: 7,
    msg: /"ipam.type"/,
  },
  {
    name: 'ipam.Type (capitalised) with "/"',
    env: baseEnv('DEL'),
    stdin: deep({ ipam: { Type: '../x' } }),
    code: 7,
    msg: /"ipam.Type" must be a plain executable name/,
  },
  {
    name: 'unknown mode',
    env: baseEnv('ADD'),
    stdin: deep({ mode: 'transparent' }),
    code: 7,
    msg: '"mode" must be one of "bridge", "delegatedNic", got "transparent"',
  },
  {
    name: 'ipMasq that is not a boolean',
    env: baseEnv('ADD'),
    stdin: deep({ ipMasq: 'yes' }),
    code: 7,
    msg: 'invalid network configuration: "ipMasq" must be true or false, got "yes"',
  },
  {
    name: 'endpointMacPrefix that is not xx-xx',
    env: baseEnv('ADD'),
    stdin: deep({ endpointMacPrefix: '0E2A' }),
    code: 7,
    msg: 'invalid network configuration: "endpointMacPrefix" must be two hex bytes "xx-xx" (e.g. "0E-2A"), got "0E2A"',
  },
  {
    name: 'delegate that is not an object',
    env: baseEnv('ADD'),
    stdin: deep({ delegate: 'win-bridge' }),
    code: 7,
    msg: /"delegate" must be an object/,
  },
  {
    name: 'delegate and top level disagree',
    env: baseEnv('ADD'),
    stdin: deep({ mtu: 1400, delegate: { type: 'win-bridge', mtu: 1500 } }),
    code: 7,
    msg: 'invalid network configuration: "mtu" is set both at the top level (1400) and in "delegate.mtu" (1500); keep one',
  },
  {
    name: 'IPv6 subnet with host bits',
    env: baseEnv('ADD'),
    stdin: deep({ subnet: 'fd00::5/64' }),
    code: 7,
    msg: '"subnet" must be a network address (host bits zero, e.g. "fd00::/64"), got "fd00::5/64"',
  },
  {
    name: 'malformed host IP in a port mapping',
    env: baseEnv('ADD'),
    stdin: deep({
      runtimeConfig: { portMappings: [{ hostPort: 80, containerPort: 80, protocol: 'tcp', hostIP: '::g' }] },
    }),
    code: 7,
    msg: '"runtimeConfig.portMappings[0].hostIP" must be an IPv4 or IPv6 address, got "::g"',
  },
];

describe.each(cases)('$name', (c) => {
  it(`is code ${c.code}, names the problem, and never reaches the handler`, async () => {
    const r = await invoke({ env: c.env, stdin: c.stdin ?? '' });
    expect(r.exitCode).toBe(1);
    expect(r.json).toBeDefined();
    expect(Object.keys(r.json!).sort()).toEqual(['cniVersion', 'code', 'msg']);
    expect(r.json!.code).toBe(c.code);
    if (typeof c.msg === 'string') expect(r.json!.msg).toContain(c.msg);
    else expect(r.json!.msg).toMatch(c.msg);
    expect(r.handlers.calls).toHaveLength(0);
    expect(r.ipamRequests).toHaveLength(0);
    // stdout is the error document alone.
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
  });
});

describe('the stdin limit is exactly 1 MiB', () => {
  it('a configuration of exactly 1048576 bytes is accepted', async () => {
    const shell = JSON.stringify(baseConf('1.0.0', { pad: '' }));
    const stdin = JSON.stringify(baseConf('1.0.0', { pad: 'x'.repeat(1024 * 1024 - shell.length) }));
    expect(Buffer.byteLength(stdin)).toBe(1024 * 1024);
    const r = await invoke({ env: baseEnv('DEL'), stdin });
    expect(r.exitCode).toBe(0);
    expect(r.handlers.calls).toHaveLength(1);
  });
});

describe('the error JSON carries the request version when it is known', () => {
  it('an env error on a 0.4.0 config says 0.4.0', async () => {
    const r = await invoke({ env: baseEnv('DEL', { CNI_IFNAME: undefined }), stdin: baseConf('0.4.0') });
    expect(r.json).toMatchObject({ cniVersion: '0.4.0', code: CniCode.INVALID_ENV });
  });
  it('an unknown version is echoed (the runtime asked in it)', async () => {
    const r = await invoke({ env: baseEnv('ADD'), stdin: baseConf('0.5.0') });
    expect(r.json).toMatchObject({ cniVersion: '0.5.0', code: 1 });
  });
  it('an unusable one falls back to the newest', async () => {
    const r = await invoke({ env: baseEnv('ADD'), stdin: '{' });
    expect(r.json).toMatchObject({ cniVersion: '1.1.0', code: 6 });
  });
});

/**
 * The environment table, CNI_ARGS and CNI_PATH, and version ordering.
 */
import { checkEnv, parseCniArgs, splitCniPath } from '../../src/cni/env';
import { CniError } from '../../src/cni/cni-error';
import { compareVersions, isSupportedVersion, versionAtLeast } from '../../src/cni/version';

function codeAndMessage(fn: () => unknown): [number, string] {
  try {
    fn();
  } catch (e) {
    return [(e as CniError).code, (e as CniError).message];
  }
  throw new Error('expected a failure');
}

describe('CNI_ARGS', () => {
  it('parses K=V pairs, keeps "=" inside values, tolerates a trailing ";"', () => {
    expect(parseCniArgs('IgnoreUnknown=1;K8S_POD_NAMESPACE=default;IP=10.0.0.5/24;X=a=b;')).toEqual({
      IgnoreUnknown: '1',
      K8S_POD_NAMESPACE: 'default',
      IP: '10.0.0.5/24',
      X: 'a=b',
    });
    expect(parseCniArgs(undefined)).toEqual({});
    expect(parseCniArgs('')).toEqual({});
    expect(parseCniArgs('EMPTY=')).toEqual({ EMPTY: '' });
  });

  it.each([
    ['novalue', 'invalid CNI_ARGS pair "novalue"'],
    ['=v', 'invalid CNI_ARGS pair "=v"'],
    ['A=1;A=2', 'invalid CNI_ARGS: key "A" given more than once'],
  ])('%s is code 4', (value, msg) => {
    const [code, message] = codeAndMessage(() => parseCniArgs(value));
    expect(code).toBe(4);
    expect(message).toContain(msg);
  });

  it('a key named __proto__ is an ordinary key', () => {
    const args = parseCniArgs('__proto__=x');
    expect(Object.keys(args)).toEqual(['__proto__']);
    expect(args.__proto__).toBe('x');
  });
});

describe('CNI_PATH', () => {
  it('splits on the platform separator and drops empty entries', () => {
    expect(splitCniPath('/a::/b:', 'linux')).toEqual(['/a', '/b']);
    expect(splitCniPath('C:\\a;C:\\b;', 'win32')).toEqual(['C:\\a', 'C:\\b']);
    // A Windows path is not split at its drive colon.
    expect(splitCniPath('C:\\k\\cni', 'win32')).toEqual(['C:\\k\\cni']);
    expect(splitCniPath(undefined, 'linux')).toEqual([]);
  });
});

describe('checkEnv', () => {
  it('validates a variable only for the verbs that need it', () => {
    // GC does not use CNI_CONTAINERID; a leftover odd value is not its business.
    expect(() => checkEnv({ CNI_COMMAND: 'GC', CNI_PATH: '/x', CNI_CONTAINERID: 'a/b' }, 'GC')).not.toThrow();
    expect(() => checkEnv({ CNI_COMMAND: 'STATUS' }, 'STATUS')).not.toThrow();
  });

  it('accepts the ids and names real runtimes use', () => {
    const env = {
      CNI_CONTAINERID: '6ad647ea8218c1a666b10706209708fd2b9ac846fd7e7f4d1106a379da65bad8',
      CNI_IFNAME: 'eth0',
      CNI_NETNS: 'container:6ad647ea8218c1a666b10706209708fd2b9ac846fd7e7f4d1106a379da65bad8',
      CNI_PATH: 'C:\\k\\azurecni\\bin',
    };
    expect(() => checkEnv(env, 'ADD')).not.toThrow();
    expect(() =>
      checkEnv({ ...env, CNI_CONTAINERID: 'cnitool-aaa4676d0278c3f4357f', CNI_IFNAME: 'vEthernet_pod.1' }, 'ADD'),
    ).not.toThrow();
    expect(() => checkEnv({ ...env, CNI_IFNAME: 'e'.repeat(64) }, 'ADD')).not.toThrow();
  });

  it('names every missing variable at once', () => {
    expect(codeAndMessage(() => checkEnv({ CNI_COMMAND: 'ADD' }, 'ADD'))).toEqual([
      4,
      'required env variables [CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME, CNI_PATH] missing for ADD',
    ]);
  });
});

describe('versions', () => {
  it('match exactly and order numerically', () => {
    expect(isSupportedVersion('0.3.1')).toBe(true);
    expect(isSupportedVersion('0.2.0')).toBe(true);
    expect(isSupportedVersion('0.5.0')).toBe(false);
    expect(isSupportedVersion('1.1')).toBe(false);
    expect(isSupportedVersion(' 1.1.0')).toBe(false);
    expect(compareVersions('0.10.0', '0.4.0')).toBeGreaterThan(0);
    expect(compareVersions('1.0.0', '1.0.0')).toBe(0);
    expect(versionAtLeast('0.3.1', '0.4.0')).toBe(false);
    expect(versionAtLeast('1.1.0', '1.1.0')).toBe(true);
    expect(() => compareVersions('1.0', '1.0.0')).toThrow('not a version');
  });
});

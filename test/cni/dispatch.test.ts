/**
 * The dispatcher with fake handlers: every verb, the result shape of every version, the error JSON, exit codes, what
 * the handlers and the IPAM factory receive, and the one log line per invocation.
 */
import { CniCode, CniError } from '../../src/cni/cni-error';
import { SUPPORTED_VERSIONS, type VerbContext, type ConfContext } from '../../src/cni/types';
import { FakeHandlers, FULL_RESULT, RecordingLogger, baseConf, baseEnv, invoke } from './helpers';

describe('VERSION', () => {
  it('answers the newest version and the supported list when stdin is empty, without other env vars', async () => {
    const r = await invoke({ env: { CNI_COMMAND: 'VERSION' } });
    expect(r.exitCode).toBe(0);
    expect(r.json).toEqual({
      cniVersion: '1.1.0',
      supportedVersions: ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'],
    });
    expect(r.handlers.calls).toHaveLength(0);
  });

  it.each(['0.4.0', '1.0.0', '2.0.0'])('echoes the requested cniVersion %s', async (v) => {
    const r = await invoke({ env: { CNI_COMMAND: 'VERSION' }, stdin: { cniVersion: v } });
    expect(r.exitCode).toBe(0);
    expect(r.json).toEqual({ cniVersion: v, supportedVersions: [...SUPPORTED_VERSIONS] });
  });

  it('refuses a malformed stdin with code 6', async () => {
    const r = await invoke({ env: { CNI_COMMAND: 'VERSION' }, stdin: '{"cniVersion":' });
    expect(r.exitCode).toBe(1);
    expect(r.json).toMatchObject({ cniVersion: '1.1.0', code: CniCode.DECODE_FAILURE });
  });
});

describe('ADD renders the result for the requested version', () => {
  const expected: Record<string, Record<string, unknown>> = {
    '0.3.0': {
      cniVersion: '0.3.0',
      interfaces: [{ name: 'eth0', mac: '00:15:5d:aa:bb:cc', sandbox: '5f0e7a3c-1b2d-4c5e-8f90-123456789abc' }],
      ips: [
        { version: '4', address: '10.0.0.5/24', gateway: '10.0.0.1', interface: 0 },
        { version: '6', address: 'fd00::5/64', gateway: 'fd00::1', interface: 0 },
      ],
      routes: [{ dst: '0.0.0.0/0', gw: '10.0.0.1' }],
      dns: FULL_RESULT.dns,
    },
    '1.0.0': {
      cniVersion: '1.0.0',
      interfaces: [{ name: 'eth0', mac: '00:15:5d:aa:bb:cc', sandbox: '5f0e7a3c-1b2d-4c5e-8f90-123456789abc' }],
      ips: [
        { address: '10.0.0.5/24', gateway: '10.0.0.1', interface: 0 },
        { address: 'fd00::5/64', gateway: 'fd00::1', interface: 0 },
      ],
      routes: [{ dst: '0.0.0.0/0', gw: '10.0.0.1' }],
      dns: FULL_RESULT.dns,
    },
    '1.1.0': {
      cniVersion: '1.1.0',
      interfaces: [FULL_RESULT.interfaces[0]],
      ips: [
        { address: '10.0.0.5/24', gateway: '10.0.0.1', interface: 0 },
        { address: 'fd00::5/64', gateway: 'fd00::1', interface: 0 },
      ],
      routes: [FULL_RESULT.routes[0]],
      dns: FULL_RESULT.dns,
    },
  };
  // 0.1.0/0.2.0: the first address of each family as ip4/ip6 (IPv6 as ip6, for dual-stack), routes with their
  // family, no interfaces (containernetworking/cni pkg/types/040 convertTo02x).
  expected['0.2.0'] = {
    cniVersion: '0.2.0',
    ip4: { ip: '10.0.0.5/24', gateway: '10.0.0.1', routes: [{ dst: '0.0.0.0/0', gw: '10.0.0.1' }] },
    ip6: { ip: 'fd00::5/64', gateway: 'fd00::1' },
    dns: FULL_RESULT.dns,
  };
  expected['0.1.0'] = { ...expected['0.2.0'], cniVersion: '0.1.0' };
  expected['0.3.1'] = { ...expected['0.3.0'], cniVersion: '0.3.1' };
  expected['0.4.0'] = { ...expected['0.3.0'], cniVersion: '0.4.0' };

  it.each([...SUPPORTED_VERSIONS])('%s', async (v) => {
    const r = await invoke({ env: baseEnv('ADD'), stdin: baseConf(v) });
    expect(r.exitCode).toBe(0);
    expect(r.json).toEqual(expected[v]);
    // stdout is exactly one JSON document and nothing else.
    expect(r.stdout.trim()).toBe(JSON.stringify(expected[v]));
  });

  it('omits an empty dns', async () => {
    const handlers = new FakeHandlers();
    handlers.result = { interfaces: [{ name: 'eth0' }], ips: [{ address: '10.0.0.5/24' }], routes: [], dns: {} };
    const r = await invoke({ env: baseEnv('ADD'), stdin: baseConf('1.0.0'), handlers });
    expect(r.json).toEqual({ cniVersion: '1.0.0', interfaces: [{ name: 'eth0' }], ips: [{ address: '10.0.0.5/24' }] });
  });
});

describe('what the handlers receive', () => {
  it('ADD: parsed conf, attachment from the env, an IPAM client built from the same env and stdin, a logger', async () => {
    const env = baseEnv('ADD', {
      CNI_ARGS: 'IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0',
      PATH: '/usr/bin',
    });
    const stdin = Buffer.from(
      JSON.stringify(baseConf('1.0.0', { ipam: { type: 'host-local', subnet: '10.1.0.0/24' } })),
    );
    const r = await invoke({ env, stdin });
    expect(r.exitCode).toBe(0);
    expect(r.handlers.calls).toHaveLength(1);
    const { verb, ctx } = r.handlers.calls[0]!;
    expect(verb).toBe('ADD');
    const v = ctx as VerbContext;
    expect(v.verb).toBe('ADD');
    expect(v.conf.name).toBe('cbr0');
    expect(v.conf.cniVersion).toBe('1.0.0');
    expect(v.attachment).toEqual({
      containerId: 'ctr-1',
      ifname: 'eth0',
      netns: '5f0e7a3c-1b2d-4c5e-8f90-123456789abc',
      args: { IgnoreUnknown: '1', K8S_POD_NAMESPACE: 'default', K8S_POD_NAME: 'web-0' },
      path: ['/opt/cni/bin', '/usr/lib/cni'],
    });
    expect(v.ipam.type).toBe('host-local');
    expect(r.ipamRequests).toHaveLength(1);
    expect(r.ipamRequests[0]!.env).toBe(env);
    expect(r.ipamRequests[0]!.stdin).toBe(stdin);
    expect(r.ipamRequests[0]!.path).toEqual(['/opt/cni/bin', '/usr/lib/cni']);
    // The handler's logger carries the invocation's identity.
    v.log.info({ step: 'x' }, 'from handler');
    expect(r.logs.at(-1)).toEqual({
      level: 'info',
      obj: { verb: 'ADD', containerId: 'ctr-1', ifname: 'eth0', step: 'x' },
      msg: 'from handler',
    });
  });

  it('splits CNI_PATH on ";" for win32', async () => {
    const r = await invoke({
      env: baseEnv('ADD', { CNI_PATH: 'C:\\k\\cni\\bin;D:\\cni' }),
      stdin: baseConf('1.0.0'),
      platform: 'win32',
    });
    expect((r.handlers.calls[0]!.ctx as VerbContext).attachment.path).toEqual(['C:\\k\\cni\\bin', 'D:\\cni']);
  });

  it('DEL without CNI_NETNS succeeds with an empty netns and gets the parsed prevResult; stdout is empty', async () => {
    const prevResult = {
      cniVersion: '0.4.0',
      interfaces: [{ name: 'eth0', mac: '00-15-5D-AA-BB-CC' }],
      ips: [{ version: '4', address: '10.0.0.5/24', interface: 0 }],
    };
    const r = await invoke({ env: baseEnv('DEL', { CNI_NETNS: undefined }), stdin: baseConf('0.4.0', { prevResult }) });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('');
    const v = r.handlers.calls[0]!.ctx as VerbContext;
    expect(r.handlers.calls[0]!.verb).toBe('DEL');
    expect(v.attachment.netns).toBe('');
    expect(v.conf.prevResult).toEqual({
      interfaces: [{ name: 'eth0', mac: '00:15:5d:aa:bb:cc' }],
      ips: [{ address: '10.0.0.5/24', interface: 0 }],
      routes: [],
      dns: {},
    });
  });

  it('CHECK at 0.4.0 reaches the handler; stdout is empty', async () => {
    const r = await invoke({ env: baseEnv('CHECK'), stdin: baseConf('0.4.0') });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.handlers.calls.map((c) => c.verb)).toEqual(['CHECK']);
  });

  it('GC gets the valid attachments and CNI_PATH; stdout is empty', async () => {
    const stdin = baseConf('1.1.0', {
      'cni.dev/valid-attachments': [{ containerID: 'a1', ifname: 'eth0' }],
      'cni.dev/attachments': [{ containerID: 'old', ifname: 'eth0' }],
    });
    const r = await invoke({ env: { CNI_COMMAND: 'GC', CNI_PATH: '/opt/cni/bin' }, stdin });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('');
    const c = r.handlers.calls[0]!.ctx as ConfContext;
    expect(c.verb).toBe('GC');
    expect(c.conf.validAttachments).toEqual([{ containerId: 'a1', ifname: 'eth0' }]);
    expect(c.path).toEqual(['/opt/cni/bin']);
  });

  it('STATUS works without CNI_PATH (empty path)', async () => {
    const r = await invoke({ env: { CNI_COMMAND: 'STATUS' }, stdin: baseConf('1.1.0') });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('');
    const c = r.handlers.calls[0]!.ctx as ConfContext;
    expect(c.verb).toBe('STATUS');
    expect(c.path).toEqual([]);
  });

  it('accepts a UTF-8 BOM before the JSON', async () => {
    const stdin = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(baseConf('1.0.0')))]);
    const r = await invoke({ env: baseEnv('DEL'), stdin });
    expect(r.exitCode).toBe(0);
  });
});

describe('errors from handlers', () => {
  it('a CniError passes through with its code, msg and details, in the request version', async () => {
    const handlers = new FakeHandlers();
    handlers.fail = new CniError(
      CniCode.CHECK_FAILED,
      'endpoint ctr-1_cbr0 is not attached',
      'namespace 5f0e… has no endpoints',
    );
    const r = await invoke({ env: baseEnv('CHECK'), stdin: baseConf('1.0.0'), handlers });
    expect(r.exitCode).toBe(1);
    expect(r.json).toEqual({
      cniVersion: '1.0.0',
      code: 105,
      msg: 'endpoint ctr-1_cbr0 is not attached',
      details: 'namespace 5f0e… has no endpoints',
    });
  });

  it('a CniError without details has no details key', async () => {
    const handlers = new FakeHandlers();
    handlers.fail = new CniError(CniCode.TRY_AGAIN_LATER, 'HNS is busy');
    const r = await invoke({ env: baseEnv('DEL'), stdin: baseConf('0.3.1'), handlers });
    expect(r.json).toEqual({ cniVersion: '0.3.1', code: 11, msg: 'HNS is busy' });
  });

  it('anything else becomes code 999 with the original message in details', async () => {
    const handlers = new FakeHandlers();
    handlers.fail = new TypeError("Cannot read properties of undefined (reading 'id')");
    const r = await invoke({ env: baseEnv('ADD'), stdin: baseConf('1.1.0'), handlers });
    expect(r.exitCode).toBe(1);
    expect(r.json).toEqual({
      cniVersion: '1.1.0',
      code: 999,
      msg: 'internal error in ADD',
      details: "Cannot read properties of undefined (reading 'id')",
    });
    // The stack goes to the log for whoever debugs it, never to stdout.
    expect(r.logs.at(-1)!.obj.stack).toEqual(expect.stringContaining('TypeError'));
    expect(r.stdout).not.toContain('at ');
  });

  it('a thrown non-Error is code 999 too', async () => {
    const handlers = new FakeHandlers();
    handlers.fail = 'boom';
    const r = await invoke({ env: baseEnv('STATUS'), stdin: baseConf('1.1.0'), handlers });
    expect(r.json).toMatchObject({ code: 999, details: 'boom' });
  });

  it('a result the renderer cannot shape (a bug in the handler) is code 999, not a crash', async () => {
    const handlers = new FakeHandlers();
    handlers.result = { interfaces: [], ips: [{ address: 'not-an-ip' }], routes: [], dns: {} };
    const r = await invoke({ env: baseEnv('ADD'), stdin: baseConf('0.3.1'), handlers });
    expect(r.exitCode).toBe(1);
    expect(r.json).toMatchObject({ code: 999, msg: 'internal error in ADD' });
  });
});

describe('the log line', () => {
  it('one line per verb with identity, duration and outcome ok, after a warn line per config warning, at the configured level and file', async () => {
    const stdin = baseConf('1.0.0', { logLevel: 'DEBUG', logFile: '/var/log/hcn-cni.log', bridge: 'azure0' });
    const r = await invoke({ env: baseEnv('ADD'), stdin });
    expect(r.loggerRequests).toEqual([{ level: 'debug', file: '/var/log/hcn-cni.log' }]);
    expect(r.logs).toEqual([
      {
        level: 'warn',
        obj: {
          verb: 'ADD',
          containerId: 'ctr-1',
          ifname: 'eth0',
          network: 'cbr0',
          warning: 'unknown key "bridge" is ignored',
        },
        msg: 'unknown key "bridge" is ignored',
      },
      {
        level: 'info',
        obj: { verb: 'ADD', containerId: 'ctr-1', ifname: 'eth0', network: 'cbr0', durationMs: 7, outcome: 'ok' },
        msg: 'ADD ok',
      },
    ]);
  });

  it('a failure before the config is parsed logs through an info logger with the error code and message', async () => {
    const r = await invoke({
      env: baseEnv('ADD', { CNI_IFNAME: undefined }),
      stdin: baseConf('1.0.0', { logLevel: 'error' }),
    });
    expect(r.loggerRequests).toEqual([{ level: 'info' }]);
    expect(r.logs).toHaveLength(1);
    expect(r.logs[0]).toMatchObject({
      level: 'error',
      obj: { verb: 'ADD', containerId: 'ctr-1', outcome: 4 },
      msg: r.json!.msg,
    });
  });

  it('a handler failure is logged with its code and details', async () => {
    const handlers = new FakeHandlers();
    handlers.fail = new CniError(CniCode.HNS_FAILURE, 'HcnCreateEndpoint failed', 'hresult 0x803b0001');
    const r = await invoke({ env: baseEnv('ADD'), stdin: baseConf('1.0.0'), handlers });
    expect(r.logs).toHaveLength(1);
    expect(r.logs[0]).toMatchObject({
      level: 'error',
      obj: { outcome: 100, details: 'hresult 0x803b0001' },
      msg: 'HcnCreateEndpoint failed',
    });
  });

  it('a successful VERSION is not logged (no logger is even created: it is the start-up cost); a failed one is', async () => {
    const r = await invoke({ env: { CNI_COMMAND: 'VERSION' } });
    expect(r.logs).toEqual([]);
    const bad = await invoke({ env: { CNI_COMMAND: 'VERSION' }, stdin: '{"cniVersion":' });
    expect(bad.logs).toMatchObject([{ level: 'error', obj: { verb: 'VERSION', outcome: 6 } }]);
  });

  it('a log file that cannot be opened falls back to the plain logger and is reported as a warning', async () => {
    const records: RecordingLogger['records'] = [];
    const r = await invoke({
      env: baseEnv('DEL'),
      stdin: baseConf('1.0.0', { logFile: '/nonexistent/dir/x.log' }),
      deps: {
        createLogger: (o) => {
          if (o.file) throw new Error('ENOENT: no such file or directory');
          return new RecordingLogger(records);
        },
      },
    });
    expect(r.exitCode).toBe(0);
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({
      level: 'warn',
      msg: expect.stringContaining('log file "/nonexistent/dir/x.log" is unusable'),
    });
  });

  it('a logger that throws does not change the protocol output', async () => {
    const r = await invoke({
      env: baseEnv('ADD'),
      stdin: baseConf('1.0.0'),
      deps: {
        createLogger: () => {
          const l = new RecordingLogger();
          l.info = () => {
            throw new Error('disk full');
          };
          return l;
        },
      },
    });
    expect(r.exitCode).toBe(0);
    expect(r.json).toMatchObject({ cniVersion: '1.0.0' });
  });
});

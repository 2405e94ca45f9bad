/**
 * The pod's DNS (src/plugin/endpoint-config.ts podDns): the namespace's service domain put before the first search
 * domain is a domain name like the rest of the list (HNS v1 joins them with ","), or the ADD fails naming why.
 */
import { podDns } from '../../src/plugin/endpoint-config';
import { cniFailure as failure, parseAddConf } from '../helpers/net-conf';

const conf = (search: string[]) => parseAddConf({ dns: { nameservers: ['10.0.0.10'], search } });

describe("the pod namespace's search domain", () => {
  it('is put first, as sdnbridge does', () => {
    expect(podDns(conf(['svc.cluster.local']), { K8S_POD_NAMESPACE: 'web' }, undefined).search).toEqual([
      'web.svc.cluster.local',
      'svc.cluster.local',
    ]);
  });
  it('a K8S_POD_NAMESPACE that is not a DNS label is error 4 naming it (a "," would split the suffix on HNS v1)', () => {
    for (const ns of ['web,evil.example', 'we b', 'web.x', 'a'.repeat(64), '-web'])
      expect([ns, failure(() => podDns(conf(['svc.cluster.local']), { K8S_POD_NAMESPACE: ns }, undefined))]).toEqual([
        ns,
        { code: 4, msg: expect.stringContaining('invalid CNI_ARGS K8S_POD_NAMESPACE') },
      ]);
  });
  it('one that makes the first search domain longer than 253 characters is error 7 naming dns.search[0]', () => {
    const long = `${'a'.repeat(60)}.`.repeat(4) + 'abcdef.x'; // 252 characters
    expect(failure(() => podDns(conf([long]), { K8S_POD_NAMESPACE: 'web' }, undefined))).toEqual({
      code: 7,
      msg: expect.stringMatching(
        /^invalid network configuration: "dns.search\[0\]" .* is not a DNS domain name \(it is 256 characters long/,
      ),
    });
  });
});

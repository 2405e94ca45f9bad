/**
 * How a replayed answer is compared with the host's: by shape and code, with ids learnt as the replay goes, and how
 * a plan's tokens and expectations are made concrete.
 */
import { problemWith, resolve } from '../../src/selftest/expect';
import { compareAnswers, formOf, IdMap } from '../../src/selftest/shape';
import type { Answer } from '../../src/selftest/calls';

const ok = (value: unknown): Answer => ({ ok: true, value });
const refused = (hresult: number): Answer => ({
  ok: false,
  hresult,
  hex: 'ignored',
  code: 'ignored',
  record: null,
  message: '',
});

const HOST_ID = '0A1B2C3D-0000-4000-8000-00000000000A';
const SIM_ID = '9f9f9f9f-1111-4111-8111-111111111111';

test('the form of a string: GUIDs and MACs by case and separator, addresses, text', () => {
  expect(formOf('9f9f9f9f-1111-4111-8111-111111111111')).toBe('guid (lower case)');
  expect(formOf('{9F9F9F9F-1111-4111-8111-111111111111}')).toBe('guid in braces (upper case)');
  expect(formOf('00-15-5D-AA-00-01')).toBe('MAC with dashes (upper case)');
  expect(formOf('00:15:5d:aa:00:01')).toBe('MAC with colons (lower case)');
  expect(formOf('10.0.0.1')).toBe('IPv4 address');
  expect(formOf('10.0.0.0/24')).toBe('IPv4 prefix');
  expect(formOf('cbr0')).toBe('text');
});

test('ids learnt from one answer translate the next arguments, in the case the host wrote them, inside paths too', () => {
  const ids = new IdMap();
  expect(compareAnswers('create', ok({ ID: HOST_ID.toLowerCase() }), ok({ ID: SIM_ID }), ids)).toEqual([]);
  expect(ids.translateArgs([HOST_ID.toLowerCase(), HOST_ID, `/endpoints/${HOST_ID.toLowerCase()}`])).toEqual([
    SIM_ID,
    SIM_ID.toUpperCase(),
    `/endpoints/${SIM_ID}`,
  ]);
});

test('differences: outcome, code, type, missing keys both ways, form, an empty list', () => {
  const ids = new IdMap();
  expect(compareAnswers('s', ok({}), refused(0x803b0002), ids)).toEqual([
    { step: 's', path: '', kind: 'outcome', host: 'answered', sim: 'refused 0x803B0002 HCN_E_ENDPOINT_NOT_FOUND' },
  ]);
  expect(compareAnswers('s', refused(0x80070490), refused(0x803b0002), ids).map((d) => d.kind)).toEqual(['code']);
  expect(compareAnswers('s', refused(0x803b0002), refused(0x803b0002), ids)).toEqual([]);
  const host = ok({ A: 1, B: 'x', C: [{ D: HOST_ID }], E: [] });
  const sim = ok({ A: '1', C: [{ D: SIM_ID }], E: [1], F: true });
  expect(compareAnswers('s', host, sim, ids).map((d) => `${d.kind} ${d.path}`)).toEqual([
    'type A',
    'missing-in-sim B',
    'form C.0.D',
    'empty E',
    'missing-on-host F',
  ]);
});

test('a listing is compared at the focused object only', () => {
  const host = ok([
    { ID: 'other', X: 1 },
    { ID: HOST_ID, Y: 'a' },
  ]);
  const sim = ok([{ ID: SIM_ID.toUpperCase(), Y: 'b' }]);
  expect(compareAnswers('list', host, sim, new IdMap(), { host: HOST_ID, sim: SIM_ID })).toEqual([]);
});

test('tokens: whole-token numbers keep their type, ":upper" upper-cases, an unknown token is an error', () => {
  expect(resolve({ P: '{{prefix}}', Path: '/x/{{ep:upper}}' }, { prefix: 24, ep: 'ab-cd' })).toEqual({
    P: 24,
    Path: '/x/AB-CD',
  });
  expect(() => resolve('{{nope}}', {})).toThrow(/before it is known/);
});

test('expectations: a refusal by one of the codes, keys present, ids the same without regard to case, a listing', () => {
  const bound = { ep: HOST_ID.toLowerCase() };
  expect(
    problemWith({ outcome: 'fails', codes: [0x803b002f], meaning: 'address in use' }, refused(0x803b002f), bound),
  ).toBeUndefined();
  expect(problemWith({ outcome: 'fails', codes: [0x803b002f], meaning: 'address in use' }, ok({}), bound)).toMatch(
    /accepted it/,
  );
  expect(problemWith({ outcome: 'ok', has: ['A.0.B'] }, ok({ A: [{}] }), bound)).toBe('the answer lacks A.0.B');
  expect(problemWith({ outcome: 'ok', sameId: { ID: 'ep' } }, ok({ ID: HOST_ID }), bound)).toBeUndefined();
  expect(
    problemWith(
      { outcome: 'ok', lists: { path: 'R', key: 'Data.Id', token: 'ep' } },
      ok({ R: [{ Data: { Id: 'x' } }] }),
      bound,
    ),
  ).toMatch(/does not list ep/);
});

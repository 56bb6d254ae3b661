// The query string parsed as Koa's own getter parses it: the same names, values and lists, odd escapes included.
import { queryParametersOf } from '../../../src/api/rest/query-parameters';

function parametersOf(querystring: string): Record<string, unknown> {
  return { ...queryParametersOf({ querystring }) };
}

test('one value per name, and a list for a name given more than once', () => {
  expect(parametersOf('date=2026-11-24&page_size=10')).toEqual({ date: '2026-11-24', page_size: '10' });
  expect(parametersOf('origin=LIS&origin=OPO')).toEqual({ origin: ['LIS', 'OPO'] });
  expect(parametersOf('')).toEqual({});
});

test('plus signs and percent escapes decode; a malformed escape is kept as written', () => {
  expect(parametersOf('city=Vila+Real%20de%20Santo%20Ant%C3%B3nio')).toEqual({
    city: 'Vila Real de Santo António',
  });
  expect(parametersOf('page_token=abc%3D%3D&bad=%zz&cut=%2')).toEqual({
    page_token: 'abc==',
    bad: '%zz',
    cut: '%2',
  });
});

test('bytes that are not UTF-8 become replacement characters, and a nul character arrives for validation', () => {
  expect(parametersOf('name=%C3%28&nul=a%00b')).toEqual({ name: '\uFFFD(', nul: 'a\u0000b' });
});

test('a name that is an object key of JavaScript is only a name', () => {
  const parameters = queryParametersOf({ querystring: '__proto__=1&constructor=2' });
  expect(Object.getPrototypeOf(parameters)).toBeNull();
  expect(Object.entries(parameters)).toEqual([
    ['__proto__', '1'],
    ['constructor', '2'],
  ]);
});

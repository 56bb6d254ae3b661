// Who counts as a direct loopback caller of the codec endpoint (the development exception to its token rule).
import type Koa from 'koa';
import { isDirectLoopbackRequest } from '../../../src/api/rest/codec-endpoint';

function contextFrom(remoteAddress: string | undefined, headers: Record<string, string> = {}): Koa.Context {
  return {
    req: { socket: { remoteAddress } },
    get: (name: string) => headers[name.toLowerCase()] ?? '',
  } as unknown as Koa.Context;
}

describe('isDirectLoopbackRequest', () => {
  it.each(['127.0.0.1', '127.10.0.3', '::1', '::ffff:127.0.0.1'])('accepts %s', (address) => {
    expect(isDirectLoopbackRequest(contextFrom(address))).toBe(true);
  });

  it.each(['203.0.113.7', '10.0.0.2', '::ffff:192.168.1.4', '2001:db8::1', '0.0.0.0', ''])(
    'refuses %s',
    (address) => {
      expect(isDirectLoopbackRequest(contextFrom(address))).toBe(false);
    },
  );

  it('refuses a loopback socket that relays someone else (a local proxy)', () => {
    for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip']) {
      expect(isDirectLoopbackRequest(contextFrom('127.0.0.1', { [header]: '203.0.113.7' }))).toBe(false);
    }
  });

  it('refuses a request whose socket address is unknown', () => {
    expect(isDirectLoopbackRequest(contextFrom(undefined))).toBe(false);
  });
});

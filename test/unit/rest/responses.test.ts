// Responses as plain data: JSON bodies sent as bytes encoded once, with the length of those bytes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { sendResponse, serializedOnce, type RestResponse } from '../../../src/api/rest/responses';

async function served(response: RestResponse): Promise<{ headers: http.IncomingHttpHeaders; body: string }> {
  const app = new Koa();
  app.use((context) => sendResponse(context, response));
  const server = app.listen(0, '127.0.0.1');
  try {
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    const answer = await fetch(`http://127.0.0.1:${port}/`);
    const headers = Object.fromEntries(answer.headers.entries());
    return { headers, body: await answer.text() };
  } finally {
    server.close();
  }
}

describe('sendResponse', () => {
  it('sends an object as JSON whose Content-Length counts bytes, not characters', async () => {
    const { headers, body } = await served({ status: 200, headers: {}, body: { city: 'Zürich → Köln' } });
    expect(headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(headers['content-length'])).toBe(Buffer.byteLength(body));
    expect(JSON.parse(body)).toEqual({ city: 'Zürich → Köln' });
  });

  it('keeps a content type the response names', async () => {
    const { headers, body } = await served({
      status: 404,
      headers: { 'content-type': 'application/problem+json' },
      body: { code: 'NOT_FOUND' },
    });
    expect(headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(body)).toEqual({ code: 'NOT_FOUND' });
  });

  it('sends a view serialized once as the same bytes to every request', async () => {
    const view = { stops: ['Zürich', 'Köln'] };
    const render = jest.fn(() => ({ stop_names: view.stops }));
    const first = await served({ status: 200, headers: {}, body: serializedOnce(view, render) });
    const second = await served({ status: 200, headers: {}, body: serializedOnce(view, render) });
    expect(render).toHaveBeenCalledTimes(1);
    expect(first.body).toBe('{"stop_names":["Zürich","Köln"]}');
    expect(second.body).toBe(first.body);
    expect(Number(second.headers['content-length'])).toBe(Buffer.byteLength(first.body));
    expect(second.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('turns a serialized view back into its JSON where a copy is stored (idempotent replays)', () => {
    const serialized = serializedOnce({}, () => ({ name: 'Köln' }));
    expect(JSON.parse(JSON.stringify({ body: serialized }))).toEqual({ body: { name: 'Köln' } });
  });
});

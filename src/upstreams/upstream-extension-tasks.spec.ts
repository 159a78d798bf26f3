import type { Client } from '@modelcontextprotocol/client';
import { ToolError } from '../tools/sdk';
import { answeredWithError } from './answered-error';
import type { CallHandlers } from './upstream-client';
import { callAsExtensionTask, TASKS_EXTENSION } from './upstream-extension-tasks';

type Sent = { headers: Record<string, string>; body: { id: string; method: string; params: Record<string, any> } };

/** A route whose fetch records each POST and answers with `reply(request, n)`. */
function routeAnswering(reply: (sent: Sent, n: number) => Response | Promise<Response>) {
  const sent: Sent[] = [];
  const route = {
    url: 'http://127.0.0.1:1/mcp',
    bearer: 'tok',
    clientInfo: { name: 'tos', version: '1' },
    capabilities: { elicitation: { form: {} } },
    fetch: (async (_url: string, init: RequestInit) => {
      const request = { headers: init.headers as Record<string, string>, body: JSON.parse(init.body as string) };
      sent.push(request);
      return reply(request, sent.length);
    }) as unknown as typeof fetch,
  };
  return { route, sent };
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const complete = { resultType: 'complete', content: [{ type: 'text', text: 'done' }] };
const handlers = (answers: unknown[] = []): CallHandlers => ({ timeoutMs: 5_000, onProgress: () => undefined, onElicit: async () => answers.shift() as never });
const following = { ttlMs: 5_000, onCreated: async () => undefined, onStatus: () => undefined };
const call = (route: ReturnType<typeof routeAnswering>['route'], answers?: unknown[]) =>
  callAsExtensionTask({} as Client, route, 'slow', { n: 1 }, new AbortController().signal, handlers(answers), following);

describe('callAsExtensionTask', () => {
  it('opts in with the 2026-07-28 envelope and headers, and reads the answer from an event stream', async () => {
    const { route, sent } = routeAnswering(({ body }) => {
      const events = [{ jsonrpc: '2.0', method: 'notifications/message', params: {} }, { jsonrpc: '2.0', id: body.id, result: complete }];
      return new Response(events.map((event) => `event: message\ndata: ${JSON.stringify(event)}\n\n`).join(''), { headers: { 'content-type': 'text/event-stream' } });
    });
    expect(await call(route)).toEqual({ content: [{ type: 'text', text: 'done' }] });
    expect(sent[0].headers).toMatchObject({ authorization: 'Bearer tok', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'slow' });
    expect(sent[0].body).toMatchObject({
      method: 'tools/call',
      params: {
        name: 'slow',
        arguments: { n: 1 },
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION]: {} } } },
      },
    });
  });

  it('answers questions asked before any task and sends the call again with the answers and the request state', async () => {
    const question = { method: 'elicitation/create', params: { message: 'Name?', requestedSchema: { type: 'object', properties: {} } } };
    const { route, sent } = routeAnswering(({ body }, n) =>
      json({ jsonrpc: '2.0', id: body.id, result: n === 1 ? { resultType: 'input_required', inputRequests: { who: question }, requestState: 'st-1' } : complete }),
    );
    await call(route, [{ action: 'accept', content: { name: 'Ada' } }]);
    expect(sent[1].body.params).toMatchObject({ name: 'slow', inputResponses: { who: { action: 'accept', content: { name: 'Ada' } } }, requestState: 'st-1' });
  });

  it('refuses to pass a question other than an elicitation to our caller', async () => {
    const { route } = routeAnswering(({ body }) => json({ jsonrpc: '2.0', id: body.id, result: { resultType: 'input_required', inputRequests: { roots: { method: 'roots/list' } } } }));
    await expect(call(route)).rejects.toThrow("The upstream asked its caller 'roots/list', which is not passed to callers");
  });

  it('makes a JSON-RPC error the SDK error the rest of the mapping knows as answered', async () => {
    const { route } = routeAnswering(({ body }) => json({ jsonrpc: '2.0', id: body.id, error: { code: -32602, message: 'no such tool' } }));
    const failure = await call(route).catch((err: unknown) => err);
    expect(answeredWithError(failure)).toBe(true);
    expect(failure).toMatchObject({ code: -32602 });
  });

  it('is retryable when the upstream answered without starting anything, and not when the call was lost after it left', async () => {
    const overloaded = await call(routeAnswering(() => new Response('busy', { status: 503 })).route).catch((err: unknown) => err);
    expect(overloaded).toBeInstanceOf(ToolError);
    expect(overloaded).toMatchObject({ retryable: true, message: expect.stringContaining('HTTP 503 without a JSON-RPC response') });
    const reset = await call(routeAnswering(() => Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }))).route).catch((err: unknown) => err);
    expect(reset).toMatchObject({ retryable: false, message: expect.stringContaining('lost after it was sent (the upstream may have started a task)') });
    const refused = new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    await expect(call(routeAnswering(() => Promise.reject(refused)).route)).rejects.toBe(refused);
  });
});

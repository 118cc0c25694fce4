/**
 * A scripted stand-in for the OpenAI Responses API on 127.0.0.1, for running the real Codex CLI offline
 * (a custom `model_providers` entry with `wire_api = "responses"` and this `base_url`). Every
 * `POST …/responses` answers with server-sent events in the shapes Codex's own test helpers build
 * (codex-rs/core/tests/common/responses.rs: `response.created`, one `response.output_item.added` and
 * `response.output_item.done` per item, `response.completed` with `usage`); each event is sent as
 * `event: <type>` and `data: <json>`. Anything else gets a 404. Request bodies are kept (`requests`).
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One output item of a scripted answer. */
export type OutputItem =
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'message'; text: string };

/** The parts of a Responses API request the scripts look at. */
export interface ResponsesRequest {
  model?: string;
  input?: { type?: string; role?: string; call_id?: string; output?: unknown; content?: unknown }[];
  [k: string]: unknown;
}

/** Chooses the items of the answer to one request; `n` counts requests from 0. */
export type ResponsesScript = (req: ResponsesRequest, n: number) => OutputItem[];

export interface ResponsesStub {
  /** the provider's `base_url` (…/v1) */
  baseUrl: string;
  requests: { path: string; body: ResponsesRequest }[];
  close(): Promise<void>;
}

/** Starts the stand-in on 127.0.0.1 with an OS-chosen port. */
export async function startResponsesStub(script: ResponsesScript): Promise<ResponsesStub> {
  const requests: ResponsesStub['requests'] = [];
  let n = 0;
  const server = createServer(async (req, res) => {
    const path = req.url ?? '/';
    const raw = await readBody(req);
    let body: ResponsesRequest = {};
    try {
      body = raw ? (JSON.parse(raw) as ResponsesRequest) : {};
    } catch {
      body = {};
    }
    requests.push({ path, body });
    if (req.method !== 'POST' || !/\/responses(\?|$)/.test(path)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: { message: `no ${req.method} ${path} here`, type: 'invalid_request_error' },
        }),
      );
      return;
    }
    const i = n++;
    const id = `resp_stub${i}`;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (ev: { type: string; [k: string]: unknown }) =>
      res.write(`event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`);
    send({ type: 'response.created', response: { id } });
    script(body, i).forEach((item, k) => {
      const wire =
        item.type === 'message'
          ? {
              type: 'message',
              role: 'assistant',
              id: `msg_${i}_${k}`,
              content: [{ type: 'output_text', text: item.text }],
            }
          : { ...item, id: `fc_${i}_${k}`, status: 'completed' };
      send({ type: 'response.output_item.added', output_index: k, item: wire });
      send({ type: 'response.output_item.done', output_index: k, item: wire });
    });
    send({
      type: 'response.completed',
      response: {
        id,
        usage: {
          input_tokens: 20,
          input_tokens_details: null,
          output_tokens: 5,
          output_tokens_details: null,
          total_tokens: 25,
        },
      },
    });
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Whether a request's input already holds the output of the call `callId` (the tool ran). */
export function hasCallOutput(req: ResponsesRequest, callId: string): boolean {
  return (req.input ?? []).some((it) => it.type === 'function_call_output' && it.call_id === callId);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * A scripted stand-in for the Anthropic Messages API on 127.0.0.1, for running the real Claude Code CLI
 * offline (`ANTHROPIC_BASE_URL`). `POST /v1/messages` (any query string) answers with what the script
 * returns for that request: streamed as the API's server-sent events (`message_start`,
 * `content_block_start` / `content_block_delta` / `content_block_stop`, `message_delta`, `message_stop`)
 * when the request asks `stream: true`, else as one JSON message. `count_tokens` gets a small count; any
 * other path a 404 in the API's error shape. Every request body is kept (`requests`) so a test can show
 * what the client sent.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One content block of a scripted answer. */
export type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown };

/** A scripted answer: its blocks and why it stopped (`tool_use` when it has tool calls). */
export interface Reply {
  content: Block[];
  stop_reason?: 'end_turn' | 'tool_use';
}

/** A request as the stand-in saw it. */
export interface SeenRequest {
  path: string;
  body: MessagesRequest;
}

/** The parts of a Messages API request the scripts look at. */
export interface MessagesRequest {
  model?: string;
  stream?: boolean;
  system?: unknown;
  tools?: { name: string }[];
  messages?: { role: string; content: unknown }[];
  [k: string]: unknown;
}

/** Chooses the answer to one request; `n` counts requests from 0. */
export type Script = (req: MessagesRequest, n: number) => Reply;

export interface AnthropicStub {
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/** Starts the stand-in on 127.0.0.1 with an OS-chosen port. */
export async function startAnthropicStub(script: Script): Promise<AnthropicStub> {
  const requests: SeenRequest[] = [];
  let n = 0;
  let msg = 0;
  const server: Server = createServer(async (req, res) => {
    const path = req.url ?? '/';
    const raw = await readBody(req);
    let body: MessagesRequest = {};
    try {
      body = raw ? (JSON.parse(raw) as MessagesRequest) : {};
    } catch {
      body = {};
    }
    requests.push({ path, body });
    if (req.method === 'POST' && path.startsWith('/v1/messages/count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ input_tokens: 42 }));
      return;
    }
    if (req.method !== 'POST' || !path.startsWith('/v1/messages')) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `no ${path} here` } }),
        );
      return;
    }
    const reply = script(body, n++);
    const id = `msg_stub${String(++msg).padStart(4, '0')}`;
    const model = body.model ?? 'claude-stub';
    const stop =
      reply.stop_reason ?? (reply.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
    const usage = {
      input_tokens: 12,
      output_tokens: 7,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: reply.content,
          stop_reason: stop,
          stop_sequence: null,
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (event: string, data: unknown) =>
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    send('message_start', {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    reply.content.forEach((b, index) => {
      if (b.type === 'text') {
        send('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'text', text: '' },
        });
        send('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text: b.text },
        });
      } else {
        send('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
        });
        send('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) },
        });
      }
      send('content_block_stop', { type: 'content_block_stop', index });
    });
    send('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    send('message_stop', { type: 'message_stop' });
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The text of a request's first user message (the prompt a main loop or a subagent started from). */
export function firstUserText(req: MessagesRequest): string {
  const first = req.messages?.find((m) => m.role === 'user');
  if (!first) return '';
  if (typeof first.content === 'string') return first.content;
  if (!Array.isArray(first.content)) return '';
  return first.content
    .map((b) =>
      typeof b === 'object' && b !== null && typeof (b as { text?: unknown }).text === 'string'
        ? (b as { text: string }).text
        : '',
    )
    .join('\n');
}

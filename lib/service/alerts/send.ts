/**
 * One HTTP attempt of a delivery (issue 28 items 2 and 4): a POST with a time limit, redirects not followed
 * (a 3xx is a failed attempt naming its `Location`), and the connection made through
 * request-filtering-agent, which refuses a socket to a loopback, link-local or private address at connect
 * time, after DNS, so a host that resolved to a public address when the target was added and to a private
 * one now is refused too. The answer's body is read up to 1 KiB, for the failure's message.
 */
import http from 'node:http';
import https from 'node:https';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';

/** What an attempt ended with: an HTTP status, or no answer (`status` null) and why. */
export interface SendResult {
  status: number | null;
  /** null on a 2xx; else a short reason: the status and the answer's first words, a timeout, a refusal */
  error: string | null;
}

/** Longest answer body read, bytes. */
const MAX_ANSWER = 1024;

const agents = new Map<string, http.Agent>();

/** The agent for `protocol` under the deployment's address rule (kept: sockets are reused per target). */
function agentFor(protocol: string, allowPrivate: boolean): http.Agent {
  const k = `${protocol}${allowPrivate}`;
  let a = agents.get(k);
  if (!a) {
    const options = { keepAlive: true, maxSockets: 4, allowPrivateIPAddress: allowPrivate };
    a =
      protocol === 'https:'
        ? new RequestFilteringHttpsAgent(options)
        : new RequestFilteringHttpAgent(options);
    agents.set(k, a);
  }
  return a;
}

/**
 * POSTs `body` to `url` with `headers` (and `content-type: application/json`). Never throws: every
 * failure is a `SendResult`.
 */
export function postJson(
  url: URL,
  headers: Record<string, string>,
  body: string,
  o: { timeoutMs: number; allowPrivate: boolean },
): Promise<SendResult> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (r: SendResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(r);
    };
    const request = url.protocol === 'https:' ? https.request : http.request;
    let req: http.ClientRequest;
    try {
      req = request(url, {
        method: 'POST',
        agent: agentFor(url.protocol, o.allowPrivate),
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'hansard-alerts/1',
        },
      });
    } catch (err) {
      resolve({ status: null, error: `could not send: ${(err as Error).message}`.slice(0, 300) });
      return;
    }
    // One limit for the whole attempt (connect, send, answer), not per socket event.
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${o.timeoutMs} ms`));
    }, o.timeoutMs);
    req.on('error', (err) => {
      const msg = /is not allowed|private|meta/i.test(err.message)
        ? `refused: ${err.message}`
        : (err as { code?: string }).code
          ? `${(err as { code?: string }).code}: ${err.message}`
          : err.message;
      finish({ status: null, error: msg.slice(0, 300) });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < MAX_ANSWER) chunks.push(c.subarray(0, MAX_ANSWER - size));
        size += c.length;
        if (size >= MAX_ANSWER) res.destroy();
      });
      const settle = () => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) return finish({ status, error: null });
        const text = Buffer.concat(chunks).toString('utf8').replace(/\s+/g, ' ').trim().slice(0, 200);
        const where =
          status >= 300 && status < 400 ? ` (redirect to ${res.headers.location ?? '?'} not followed)` : '';
        finish({ status, error: `HTTP ${status}${where}${text ? `: ${text}` : ''}` });
      };
      res.on('end', settle);
      res.on('close', settle);
      res.on('error', settle);
    });
    req.end(body);
  });
}

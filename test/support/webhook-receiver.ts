/**
 * A webhook receiver on loopback for the alert tests (issue 28 "Done when"): a real HTTP server that
 * checks every request's signature with the `standardwebhooks` package, unchanged, as a team's receiver
 * would, and fails or recovers on command (`mode`). It records every request it got, verified or not.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request as the receiver got it. */
export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** the body parsed, when it verified under one of the receiver's secrets */
  payload: unknown;
  /** null when it verified; else the library's error */
  error: string | null;
  /** the answer the receiver gave (null: none, the `hang` mode) */
  answered: number | null;
}

export type ReceiverMode = 'ok' | 'fail' | 'hang' | 'redirect';

export interface WebhookReceiver {
  url: string;
  /** the secrets it accepts (`whsec_…`); a request verifies when one of them matches */
  secrets: string[];
  mode: ReceiverMode;
  received: Received[];
  /** the verified requests, by webhook-id: what a receiver that drops duplicates keeps */
  unique(): Map<string, Received>;
  /** resolves once `n` requests have come (or rejects after `ms`) */
  waitFor(n: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Starts a receiver on 127.0.0.1 (a free port). */
export async function startWebhookReceiver(path = '/hook'): Promise<WebhookReceiver> {
  const waiters: { n: number; resolve: () => void }[] = [];
  const hanging = new Set<import('node:http').ServerResponse>();
  const r: WebhookReceiver = {
    url: '',
    secrets: [],
    mode: 'ok',
    received: [],
    unique() {
      const out = new Map<string, Received>();
      for (const x of r.received) if (x.error === null && !out.has(x.id)) out.set(x.id, x);
      return out;
    },
    waitFor(n, ms = 10_000) {
      if (r.received.length >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${r.received.length} of ${n} requests in ${ms} ms`)),
          ms,
        );
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const headers = {
      'webhook-id': String(req.headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
    };
    let payload: unknown = null;
    let error: string | null = 'no secret matched';
    for (const s of r.secrets) {
      try {
        payload = new Webhook(s).verify(body, headers);
        error = null;
        break;
      } catch (err) {
        error = (err as Error).message;
      }
    }
    const got: Received = {
      id: headers['webhook-id'],
      timestamp: headers['webhook-timestamp'],
      signature: headers['webhook-signature'],
      body,
      payload,
      error,
      answered: null,
    };
    r.received.push(got);
    for (const w of [...waiters]) {
      if (r.received.length >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
    if (r.mode === 'hang') {
      hanging.add(res);
      return;
    }
    if (r.mode === 'redirect') {
      got.answered = 307;
      res.writeHead(307, { location: 'http://127.0.0.1:1/elsewhere' }).end();
      return;
    }
    got.answered = r.mode === 'ok' ? 204 : 500;
    res.writeHead(got.answered).end(r.mode === 'ok' ? undefined : 'receiver down for a test');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return r;
}

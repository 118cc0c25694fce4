/**
 * Attack on alert targets' signing secrets (issue 28 items 3 and 6, docs/alerts.md "Where the secrets
 * are", "Rotating the secret"): once a target is created, is its `whsec_` secret ever in an answer again
 * (the list, deliveries, the board's HTML, an error), in a log line the server writes, in the SQLite file
 * in clear text (its bytes read raw, WAL included), or openable as another tenant's (the tenant is the
 * sealer's associated data)? Does a rotated-out secret stop signing when its grace ends? Over real HTTP on
 * loopback: the real server of `hansard serve` (its log and request log captured) and `createApp` over the
 * real SQLite store, with a real receiver verifying signatures with `standardwebhooks`.
 *
 * What holds is an ordinary test; what gives way is `it.fails` with a comment saying what should happen.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSecretSealer } from '../../lib/deploy/local-sealer.js';
import { startServer as startServe } from '../../lib/deploy/local-serve.js';
import { newId } from '../../lib/log/index.js';
import { AlertWorker, DEFAULT_ALERT_CONFIG } from '../../lib/service/alerts/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

let rx: WebhookReceiver;
let other: WebhookReceiver;
beforeAll(async () => {
  rx = await startWebhookReceiver('/rx');
  other = await startWebhookReceiver('/other');
});
afterAll(async () => {
  await rx?.close();
  await other?.close();
});

/** Where a secret may hide in bytes: the whole text, its base64 part, and its 32 raw bytes. */
function needles(secret: string): Buffer[] {
  const b64 = secret.slice('whsec_'.length);
  return [Buffer.from(secret), Buffer.from(b64), Buffer.from(b64, 'base64')];
}

describe('the real server: answers, logs and the SQLite file', () => {
  const root = mkdtempSync(join(tmpdir(), 'hansard-attack-alert-secrets-'));
  const data = join(root, 'data');
  const admin = `hns_${'S3cretsT'.repeat(5)}Ab3`;
  const logs: string[] = [];
  const printed: string[] = [];
  let running: Awaited<ReturnType<typeof startServe>> | null = null;
  const secrets: string[] = [];

  afterAll(async () => {
    await running?.close(0);
    rmSync(root, { recursive: true, force: true });
  });

  it('a secret is in its 201 (and the rotation’s 200) only: never in a list, deliveries, the board, an error', async () => {
    running = await startServe({
      port: 0,
      host: '127.0.0.1',
      data,
      bootstrapToken: admin,
      print: (l) => printed.push(l),
      log: (l) => logs.push(l),
      requestLog: (l) => logs.push(l),
      rateLimit: 0,
      digester: false,
      allowPrivateAlertTargets: true,
      alertPollMs: 50,
    });
    const srv = running;
    const a = await request(srv, 'POST', '/v1/alerts', { token: admin, json: { url: rx.url, label: 'l' } });
    expect(a.status, a.text).toBe(201);
    const id = a.json.id as string;
    secrets.push(a.json.secret);
    const r = await request(srv, 'POST', `/v1/alerts/${id}/rotate`, {
      token: admin,
      json: { grace_seconds: 3600 },
    });
    expect(r.status, r.text).toBe(200);
    secrets.push(r.json.secret);
    rx.secrets = [...secrets];
    // a test and a blocked report, delivered by the server's own worker
    expect((await request(srv, 'POST', `/v1/alerts/${id}/test`, { token: admin })).status).toBe(202);
    const sid = newId('s');
    expect(
      (await request(srv, 'POST', `/v1/sessions/${sid}/status`, { token: admin, json: { state: 'blocked' } }))
        .status,
    ).toBe(201);
    await rx.waitFor(2, 10_000);
    for (const got of rx.received) expect(got.error).toBeNull();

    const answers = [
      await request(srv, 'GET', '/v1/alerts', { token: admin }),
      await request(srv, 'GET', `/v1/alerts/${id}/deliveries?limit=200`, { token: admin }),
      await request(srv, 'GET', `/v1/sessions/${sid}/alerts`, { token: admin }),
      await request(srv, 'GET', '/alerts', { token: admin }),
      await request(srv, 'GET', `/sessions/${sid}`, { token: admin }),
      // errors about the target: a bad body, a bad grace, an unknown field named `secret`
      await request(srv, 'POST', '/v1/alerts', { token: admin, json: { url: rx.url, secret: secrets[0] } }),
      await request(srv, 'POST', `/v1/alerts/${id}/rotate`, { token: admin, json: { grace_seconds: -1 } }),
      await request(srv, 'GET', '/openapi.json'),
    ];
    for (const ans of answers) {
      expect(ans.status).toBeLessThan(500);
      for (const s of secrets) {
        // the body of the error that echoes what the client sent may hold it (the client's own): the
        // one case allowed is an `invalid_body` naming the unknown key, checked below
        if (ans.json?.error?.code === 'invalid_body') continue;
        expect(ans.text).not.toContain(s);
        expect(ans.text).not.toContain(s.slice(6));
      }
      // no answer but an error echoing the client's own body, or the API's description, says whsec_
      const describes = ans.json?.error !== undefined || ans.text.includes('"openapi"');
      if (!describes) expect(ans.text).not.toContain('whsec_');
    }
    // the unknown field's error names the key, not its value
    const extra = answers[5]!;
    expect(extra.status).toBe(400);
    expect(extra.text).not.toContain(secrets[0]);
  });

  it('no log line (error log, request log, banner) holds a secret', async () => {
    const all = [...logs, ...printed].join('\n');
    for (const s of secrets) {
      expect(all).not.toContain(s);
      expect(all).not.toContain(s.slice(6));
    }
    expect(all).not.toContain('whsec_');
  });

  it('the SQLite file (and its WAL) holds no secret in clear text, nor its raw bytes; the key file is 0600', async () => {
    const files = () =>
      ['state.sqlite', 'state.sqlite-wal'].map((f) => join(data, f)).filter((f) => existsSync(f));
    expect(files().length).toBeGreaterThan(0);
    const scan = () => {
      for (const f of files()) {
        const bytes = readFileSync(f);
        for (const s of secrets) for (const n of needles(s)) expect(bytes.indexOf(n), `${f}`).toBe(-1);
      }
    };
    scan();
    await running?.close(0);
    running = null;
    scan(); // after the checkpoint of a clean stop
    const key = join(data, 'alert-secrets.key');
    expect(statSync(key).mode & 0o777).toBe(0o600);
    // and the sealed text is there, under the tenant's AAD: it opens for `local` only
    const sealer = new LocalSecretSealer(data);
    const sealed = readFileSync(join(data, 'state.sqlite'))
      .toString('latin1')
      .match(/v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{40,}/);
    expect(sealed).not.toBeNull();
    expect(secrets).toContain(await sealer.open('local', sealed![0]));
    await expect(sealer.open('acme', sealed![0])).rejects.toThrow(/does not open/);
    await expect(sealer.open('Local', sealed![0])).rejects.toThrow(/does not open/);
  });
});

describe("another tenant's sealed secret, and a rotation's grace", () => {
  const keys = mkdtempSync(join(tmpdir(), 'hansard-attack-alert-seal-'));
  const sealer = new LocalSecretSealer(keys);
  const config = { ...DEFAULT_ALERT_CONFIG, allowPrivateTargets: true, timeoutMs: 3_000 };
  const srv = useServer({ tenants: ['acme', 'globex'], deps: { alerts: { sealer, config } } });
  let skew = 0;
  const drain = () =>
    new AlertWorker({
      state: srv.stores.state,
      segments: srv.stores.segments,
      sealer,
      now: () => new Date(Date.now() + skew),
      config,
    }).drainOnce();
  afterAll(() => rmSync(keys, { recursive: true, force: true }));

  it("acme's sealed secret copied into a globex target (the store written directly) signs nothing: refused, nothing sent", async () => {
    const a = await request(srv, 'POST', '/v1/alerts', { token: srv.admin, json: { url: rx.url } });
    const g = await request(srv, 'POST', '/v1/alerts', {
      token: srv.tenants.globex.admin,
      json: { url: other.url },
    });
    expect(a.status).toBe(201);
    expect(g.status).toBe(201);
    const acme = (await srv.stores.state.getAlertTarget('acme', a.json.id))!;
    const globex = (await srv.stores.state.getAlertTarget('globex', g.json.id))!;
    await srv.stores.state.putAlertTarget({ ...globex, secrets: acme.secrets, version: globex.version + 1 });
    other.secrets = [a.json.secret, g.json.secret];
    const before = other.received.length;
    expect(
      (await request(srv, 'POST', `/v1/alerts/${g.json.id}/test`, { token: srv.tenants.globex.admin }))
        .status,
    ).toBe(202);
    await drain();
    expect(other.received.length).toBe(before);
    const d = await request(srv, 'GET', `/v1/alerts/${g.json.id}/deliveries`, {
      token: srv.tenants.globex.admin,
    });
    expect(d.json.deliveries[0]).toMatchObject({ status: 'pending', attempts: 1, last_status: null });
    expect(d.json.deliveries[0].last_error).toMatch(/does not open/);
    expect(d.text).not.toContain(a.json.secret);
    await request(srv, 'DELETE', `/v1/alerts/${g.json.id}`, { token: srv.tenants.globex.admin });
    await request(srv, 'DELETE', `/v1/alerts/${a.json.id}`, { token: srv.admin });
  });

  it('a rotated-out secret signs through its grace and not one second after it', async () => {
    const a = await request(srv, 'POST', '/v1/alerts', { token: srv.admin, json: { url: rx.url } });
    const old = a.json.secret as string;
    const r = await request(srv, 'POST', `/v1/alerts/${a.json.id}/rotate`, {
      token: srv.admin,
      json: { grace_seconds: 60 },
    });
    const fresh = r.json.secret as string;
    rx.secrets = [old];
    const send = async () => {
      const t = await request(srv, 'POST', `/v1/alerts/${a.json.id}/test`, { token: srv.admin });
      await drain();
      return rx.received.find((x) => x.id === t.json.event_id)!;
    };
    const within = await send();
    expect(within.signature.split(' ')).toHaveLength(2);
    expect(within.error).toBeNull(); // the old secret still verifies
    skew = 61_000; // the worker's clock past the grace
    try {
      const after = await send();
      expect(after.signature.split(' ')).toHaveLength(1);
      expect(after.error).not.toBeNull(); // the old secret no longer verifies it
      const headers = {
        'webhook-id': after.id,
        'webhook-timestamp': after.timestamp,
        'webhook-signature': after.signature,
      };
      expect(new Webhook(fresh).verify(after.body, headers)).toBeTruthy();
      expect(() => new Webhook(old).verify(after.body, headers)).toThrow();
    } finally {
      skew = 0;
    }
    // and the list says no previous secret once the grace is over (its clock is the server's: 60 s on)
    const list = await request(srv, 'GET', '/v1/alerts', { token: srv.admin });
    const row = list.json.targets.find((t: { id: string }) => t.id === a.json.id);
    expect(Date.parse(row.previous_secret_until)).toBeLessThan(Date.now() + 61_000);
  });
});

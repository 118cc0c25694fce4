/**
 * `hansard alerts` (issue 28 item 2) against the real server of `hansard serve` (lib/deploy/local-serve.ts,
 * with `--allow-private-alert-targets` so that a receiver on loopback may be a target; its own alert
 * worker delivers): add with its rule (`--after 10m`, repeated `--agent`) and the secret once, list, test
 * `--wait` delivered and failed, deliveries, rotate `--grace`, remove; usage errors exit 2 before any
 * request; `serve --help` names the flag.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHansard } from '../../support/cli.js';
import { useServer } from '../../support/server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const srv = useServer({ real: true, digester: false, allowPrivateAlertTargets: true });
const cwd = mkdtempSync(join(tmpdir(), 'hansard-alerts-cli-'));
const hansard = (...argv: string[]) =>
  runHansard(argv, { cwd, env: { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.admin } });

let ok: WebhookReceiver;
let down: WebhookReceiver;
beforeAll(async () => {
  ok = await startWebhookReceiver('/ok');
  down = await startWebhookReceiver('/down');
  down.mode = 'fail';
});
afterAll(async () => {
  await ok?.close();
  await down?.close();
});

describe('hansard alerts', () => {
  let id: string;

  it('add --json: the target with its rule and its whsec_ secret', async () => {
    const r = await hansard(
      'alerts',
      'add',
      '--url',
      ok.url,
      '--events',
      'session.blocked,record.damaged',
      '--agent',
      'claude-code',
      '--agent',
      'codex',
      '--after',
      '10m',
      '--label',
      'team',
      '--json',
    );
    expect(r.code, r.err).toBe(0);
    const created = JSON.parse(r.out);
    expect(created).toMatchObject({
      url: ok.url,
      events: ['session.blocked', 'record.damaged'],
      agents: ['claude-code', 'codex'],
      after_seconds: 600,
      format: 'standard',
      label: 'team',
    });
    expect(created.secret).toMatch(/^whsec_/);
    id = created.id;
    ok.secrets = [created.secret];
  });

  it('add without --json: the secret alone on stdout, what it is and how to verify on stderr', async () => {
    const r = await hansard('alerts', 'add', '--url', down.url, '--format', 'slack');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^whsec_[A-Za-z0-9+/=]+\n$/);
    expect(r.err).toContain('shown once');
    expect(r.err).toContain('new Webhook(secret).verify(rawBody, headers)');
    expect(r.err).toMatch(/hansard alerts test at_[0-9A-Z]{26} --wait/);
    down.secrets = [r.out.trim()];
  });

  it('list: each target and its rule, never a secret', async () => {
    const json = await hansard('alerts', 'list', '--json');
    expect(json.code, json.err).toBe(0);
    const targets = JSON.parse(json.out) as { id: string; format: string }[];
    expect(targets.map((t) => t.id)).toContain(id);
    expect(targets.map((t) => t.format).sort()).toEqual(['slack', 'standard']);
    expect(json.out).not.toContain('whsec_');
    const text = await hansard('alerts', 'list');
    expect(text.code, text.err).toBe(0);
    expect(text.out).toContain(
      `${id}  ${ok.url} (standard; events: session.blocked,record.damaged; agents: claude-code,codex; after 10m) "team"`,
    );
    expect(text.out).not.toContain('whsec_');
  });

  it('test --wait: delivered by the server, signed with the secret add printed', async () => {
    const r = await hansard('alerts', 'test', id, '--wait');
    expect(r.code, r.err).toBe(0);
    const eventId = /delivered (msg_[0-9A-Z]{26}) to /.exec(r.out)?.[1];
    expect(eventId, r.out).toBeDefined();
    expect(r.out).toContain('(HTTP 204, 1 attempt)');
    const got = ok.received.find((x) => x.id === eventId)!;
    expect(got.error).toBeNull();
    const deliveries = await hansard('alerts', 'deliveries', id, '--json');
    expect(deliveries.code, deliveries.err).toBe(0);
    expect(JSON.parse(deliveries.out)[0]).toMatchObject({
      event_id: eventId,
      status: 'delivered',
      attempts: 1,
    });
    const text = await hansard('alerts', 'deliveries', id);
    expect(text.out).toMatch(new RegExp(`${eventId}  alert\\.test +  - +  delivered  1 attempt, delivered `));
  });

  it('test --wait on a failing receiver: exit 1 with the last error, the retry left to the server', async () => {
    const { id: slackId } = (
      JSON.parse((await hansard('alerts', 'list', '--json')).out) as { id: string; format: string }[]
    ).find((t) => t.format === 'slack')!;
    const r = await hansard('alerts', 'test', slackId, '--wait');
    expect(r.code, r.out).toBe(1);
    expect(r.err).toMatch(
      /failed to deliver msg_[0-9A-Z]{26} to at_[0-9A-Z]{26} \(HTTP 500: [^)]*\); retried at /,
    );
    expect(down.received.length).toBeGreaterThan(0);
  });

  it('rotate --grace 1h: a new secret once, the previous one signing for an hour', async () => {
    const r = await hansard('alerts', 'rotate', id, '--grace', '1h', '--json');
    expect(r.code, r.err).toBe(0);
    const rotated = JSON.parse(r.out);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(ok.secrets[0]);
    expect(Math.abs(Date.parse(rotated.previous_secret_until) - Date.now() - 3_600_000)).toBeLessThan(60_000);
  });

  it('remove: gone, and a second remove is refused as not found (exit 2)', async () => {
    const r = await hansard('alerts', 'remove', id);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`removed alert target ${id}`);
    const again = await hansard('alerts', 'remove', id, '--json');
    expect(again.code).toBe(2);
    expect(JSON.parse(again.err).error).toMatchObject({ code: 'not_found', exit_code: 2 });
    expect((await hansard('alerts', 'list', '--json')).out).not.toContain(id);
  });

  it('refuses what it can tell is wrong before any request, with exit 2', async () => {
    for (const [argv, said] of [
      [['add', '--url', ok.url, '--after', '600'], '--after 600 has no unit'],
      [['add', '--url', ok.url, '--after', '2d'], '--after 2d is out of range'],
      [['add', '--url', ok.url, '--after', 'soon'], '--after soon is not a duration'],
      [['add', '--url', ok.url, '--events', 'session.blocked,nope'], 'unknown event kind nope'],
      [['add', '--url', ok.url, '--format', 'teams'], "argument 'teams' is invalid"],
      [['rotate', 'at_01JAAAAAAAAAAAAAAAAAAAAAAA', '--grace', '8d'], '--grace 8d is out of range'],
      [['remove', 'whsec_abc'], 'is not an alert target id'],
      [['deliveries', 'at_01JAAAAAAAAAAAAAAAAAAAAAAA', '--limit', '500'], '--limit 500 is not a number'],
    ] as const) {
      const r = await hansard('alerts', ...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err).toContain(said);
    }
    // the server refuses a field the CLI passes on as given: exit 2, with the server's words
    const far = await hansard('alerts', 'add', '--url', 'ftp://example.com/x');
    expect(far.code).toBe(2);
    expect(far.err).toContain('invalid_target');
  });

  it('teaches: --help gives examples and the docs, serve --help names the private-address flag', async () => {
    const help = await hansard('alerts', '--help');
    expect(help.out).toContain('hansard alerts add --url https://hooks.example.com/hansard');
    expect(help.out).toContain('docs/alerts.md');
    const serve = await hansard('serve', '--help');
    expect(serve.out).toMatch(/--allow-private-alert-targets +for tests and private networks: lets alert/);
  });
});

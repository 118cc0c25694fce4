/**
 * The hansard side of the real-client suites: the CLI built from this checkout (`inject('hansardBin')`)
 * run as its own process, a real `hansard serve` with a capture token, and what the server holds of a
 * captured session (its merged events, verify, attribution).
 *
 * A capture suite first calls `requireCapture`: while `hansard hook …` or `hansard integrations sync`
 * do not exist (or the checkout does not build), it fails there with a sentence saying so, rather than
 * later with an empty spool.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, inject } from 'vitest';
import { type ServeProcess, startServeProcess } from '../../../harness/serve-process.js';
import { request } from '../../support/http.js';

/** A finished `hansard` run. */
export interface HansardRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs this checkout's built `bin/hansard ARGS` with exactly `env` (plus PATH), stdin closed. */
export function hansard(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<HansardRun> {
  const bin = inject('hansardBin');
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [bin, ...args],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, timeout: timeoutMs, encoding: 'utf8' },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr: err?.killed ? `killed after ${timeoutMs} ms\n${stderr}` : stderr });
      },
    );
    // A hook reads its event from stdin: an open pipe would keep it waiting.
    child.stdin?.end();
  });
}

/**
 * Fails the test, with what is missing, unless this checkout built and its CLI lists `hook <harness>` and
 * `integrations sync` in their help (a hook's own `--help` may be taken as an event and print nothing).
 */
export async function requireCapture(harness: 'claude-code' | 'codex'): Promise<void> {
  const buildError = inject('hansardBuildError');
  expect(buildError, 'the capture suites run the CLI of this checkout').toBe('');
  for (const [group, sub] of [
    ['hook', harness],
    ['integrations', 'sync'],
  ] as const) {
    const r = await hansard([group, '--help'], {}, 20_000);
    expect(
      new RegExp(`^\\s+${sub}\\b`, 'm').test(r.stdout),
      `\`hansard ${group} ${sub}\` is not there yet (\`hansard ${group} --help\` exited ${r.code}: ${r.stdout}${r.stderr})`,
    ).toBe(true);
  }
}

/** A running server and a token of the kind a person gives `integrations sync`. */
export interface CaptureServer {
  srv: ServeProcess;
  url: string;
  /** scopes ingest, report, read: what capture ships with */
  token: string;
  /** the tenant's admin token, for the checks */
  admin: string;
}

/** Starts `hansard serve` (from source) and mints a capture token. */
export async function startCaptureServer(): Promise<CaptureServer> {
  const srv = await startServeProcess();
  const r = await request(srv, 'POST', '/v1/tokens', {
    token: srv.admin,
    json: { scopes: ['ingest', 'report', 'read'], label: 'real-client capture' },
  });
  expect(r.status, r.text).toBe(201);
  return { srv, url: srv.url, token: r.json.token as string, admin: srv.admin };
}

/** The session directories in a capture state dir's spool (`<state>/spool/s_…`). */
export function spooledSessions(state: string): string[] {
  const spool = join(state, 'spool');
  if (!existsSync(spool)) return [];
  return readdirSync(spool).filter((d) => d.startsWith('s_'));
}

/** Polls `GET /v1/sessions/{sid}` until it answers 200 or `ms` pass; whether it did. */
export async function waitForSession(cs: CaptureServer, sid: string, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await request(cs.srv, 'GET', `/v1/sessions/${sid}`, { token: cs.admin });
    if (r.status === 200) return true;
    if (Date.now() > until) return false;
    await new Promise((res) => setTimeout(res, 250));
  }
}

/** One merged event as replay gives it. */
// biome-ignore lint/suspicious/noExplicitAny: the checks read events field by field
export type Ev = Record<string, any> & { type: string; id: string; w: string };

/** What the server holds of one session. */
export interface StoredSession {
  events: Ev[];
  // biome-ignore lint/suspicious/noExplicitAny: VerifyReport, read field by field
  verify: any;
  // biome-ignore lint/suspicious/noExplicitAny: AttributionList, read field by field
  attribution: any[];
}

/** Reads a session's replay (ndjson), verify and attribution with the admin token. */
export async function readStored(cs: CaptureServer, sid: string): Promise<StoredSession> {
  const replay = await request(cs.srv, 'GET', `/v1/sessions/${sid}/replay`, { token: cs.admin });
  expect(replay.status, replay.text).toBe(200);
  const events = replay.text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Ev);
  const verify = await request(cs.srv, 'GET', `/v1/sessions/${sid}/verify`, { token: cs.admin });
  expect(verify.status, verify.text).toBe(200);
  const attribution = await request(cs.srv, 'GET', `/v1/sessions/${sid}/attribution`, { token: cs.admin });
  expect(attribution.status, attribution.text).toBe(200);
  return { events, verify: verify.json, attribution: attribution.json.attributions };
}

/** Events of one type. */
export const ofType = (s: StoredSession, type: string): Ev[] => s.events.filter((e) => e.type === type);

/**
 * `hansard session report --events-file PATH|-` (issue 12 item 3): the declared events read from a file or
 * stdin; a report that breaks a limit of seed 000 is refused before anything is sent (exit 2, the limits
 * named), in text and with `--json`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../../lib/client/api/client.js';
import { uploadSession } from '../../../lib/client/api/upload.js';
import { runCli } from '../../../lib/client/cli/main.js';
import { newId } from '../../../lib/log/format/ids.js';
import { openSession } from '../../../lib/log/write/writer.js';
import { request } from '../../support/http.js';
import { useServer } from '../../support/server.js';

const srv = useServer({ tokens: { reporter: ['report', 'read', 'ingest'] } });

async function report(args: string[], stdin?: string) {
  let out = '';
  let err = '';
  const code = await runCli(['session', 'report', ...args], {
    stdout: { write: (s: string | Uint8Array) => (out += String(s)) },
    stderr: { write: (s: string) => (err += s) },
    env: { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.tokens.reporter },
    cwd: srv.workDir,
    ...(stdin === undefined ? {} : { stdin: Readable.from([stdin]) }),
  } as Parameters<typeof runCli>[1]);
  return { code, out, err };
}

const EVENTS = [
  { kind: 'plan', evidence: [] },
  { kind: 'evidence', evidence: [{ type: 'test', ref: 'parser-unit-tests', result: 'passed' }] },
];

function file(name: string, content: string): string {
  mkdirSync(srv.workDir, { recursive: true });
  const path = join(srv.workDir, name);
  writeFileSync(path, content);
  return path;
}

/** A session the server holds a segment of (a report usually follows the agent's first events). */
async function seeded(): Promise<string> {
  mkdirSync(srv.workDir, { recursive: true });
  const w = openSession(srv.workDir, { agent: 'bot' });
  w.message({ user_id: 'priya', text: 'fix the parser' });
  w.end();
  await uploadSession(w.dir, { client: new ApiClient({ url: srv.url, token: srv.tokens.reporter }) });
  return w.sid;
}

async function stored(sid: string) {
  return request(srv, 'GET', `/v1/sessions/${sid}/status`, { token: srv.tokens.reporter });
}

describe('session report --events-file', () => {
  it('reads the events from a file (relative to the working directory) and stores them', async () => {
    const sid = await seeded();
    file('events.json', JSON.stringify(EVENTS));
    const r = await report(['--session', sid, '--state', 'working', '--events-file', 'events.json']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(`reported working for ${sid}\n`);
    const got = await stored(sid);
    expect(got.status).toBe(200);
    expect(got.json.events).toMatchObject(EVENTS);
  });

  it('reads them from stdin with -, and --json prints the answer', async () => {
    const sid = await seeded();
    const r = await report(
      ['--session', sid, '--state', 'done', '--note', 'tests pass', '--events-file', '-', '--json'],
      JSON.stringify(EVENTS.slice(1)),
    );
    expect(r.code, r.err).toBe(0);
    const body = JSON.parse(r.out);
    expect(body).toMatchObject({ sid, state: 'done', note: 'tests pass', events: EVENTS.slice(1) });
    expect((await stored(sid)).json.events).toMatchObject(EVENTS.slice(1));
  });

  it('refuses 5 events with exit 2, naming the limit, and sends nothing', async () => {
    const sid = newId('s');
    const path = file('five.json', JSON.stringify(Array.from({ length: 5 }, () => ({ kind: 'plan' }))));
    const r = await report(['--session', sid, '--state', 'working', '--events-file', path]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('events: a report has at most four events');
    expect(r.err).toContain('at most 4 events, each with at most 4 evidence items');
    expect((await stored(sid)).status).toBe(404);
  });

  it('refuses a note of 241 characters and a ref of 161 by their paths, with the limits', async () => {
    const sid = newId('s');
    const path = file(
      'long-ref.json',
      JSON.stringify([
        { kind: 'evidence', evidence: [{ type: 'file', ref: 'a'.repeat(161), result: 'modified' }] },
      ]),
    );
    const r = await report([
      '--session',
      sid,
      '--state',
      'working',
      '--note',
      'n'.repeat(241),
      '--events-file',
      path,
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--note: the note is at most 240 characters');
    expect(r.err).toContain('events[0].evidence[0].ref: a reference is at most 160 characters');
    expect((await stored(sid)).status).toBe(404);
  });

  it('says what is wrong with a missing file, bad JSON, or both flags at once (exit 2)', async () => {
    const sid = newId('s');
    const base = ['--session', sid, '--state', 'working'];
    const missing = await report([...base, '--events-file', 'nope.json']);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('--events-file nope.json: cannot read it (no such file)');
    const bad = await report([...base, '--events-file', '-'], '[{"kind":');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--events-file - \(stdin\) is not valid JSON/);
    const both = await report([...base, '--events', '[]', '--events-file', 'x.json']);
    expect(both.code).toBe(2);
    expect(both.err).toContain('--events or --events-file, not both');
    expect((await stored(sid)).status).toBe(404);
  });

  it('with --json, a refusal is one error object on stderr with exit code 2', async () => {
    const sid = newId('s');
    const path = file('unknown-kind.json', JSON.stringify([{ kind: 'boast' }]));
    const r = await report(['--session', sid, '--state', 'working', '--events-file', path, '--json']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    const e = JSON.parse(r.err).error;
    expect(e).toMatchObject({ code: 'usage', exit_code: 2 });
    expect(e.message).toContain('events[0].kind:');
    expect(e.message).toContain('limits: a note of at most 240 characters');
  });

  it('keeps --events as before', async () => {
    const sid = await seeded();
    const r = await report(['--session', sid, '--state', 'blocked', '--events', '[{"kind":"blocked"}]']);
    expect(r.code, r.err).toBe(0);
    expect((await stored(sid)).json.events).toMatchObject([{ kind: 'blocked', evidence: [] }]);
  });
});

/**
 * End to end through the built CLI (DESIGN §4, §6): `hansard serve` as a child process, then tokens,
 * uploads, a status report, server and local replays compared byte for byte, the board (JSON and the
 * signed-in HTML page), a real Claude Code transcript imported and uploaded, and the CLI's usage errors.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idPattern, ULID_SOURCE } from '../../lib/log/index.js';
import { navigate } from '../support/http.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = join(ROOT, 'bin', 'hansard');
const SEED = 'test/fixtures/seed-session/s_01KZVVGRNR3D5V708Z4NPGG11H';
const MULTI_PARENT = 'test/fixtures/multi-writer';
/** A real Claude Code transcript (test/fixtures/README.md says where it came from). */
const TRANSCRIPT = 'test/fixtures/real/ccl-representative_messages.jsonl';
/** A fixed admin token installed through HANSARD_BOOTSTRAP_TOKEN: hns_ and 43 letters and digits. */
const ADMIN = 'hns_E2eAdminToken0123456789abcdefghijKLMNOPQRST';
const NOTE = 'e2e: comparing server and local replays';

interface Run {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

let tmp: string;
let server: ChildProcess;
let serverStderr = '';
let url: string;
let boardToken: string;
let boardLink: string;
let reportToken: string;
let ingestToken: string;

const MULTI = join(MULTI_PARENT, readdirSync(join(ROOT, MULTI_PARENT)).find((n) => n.startsWith('s_'))!);
const FIXTURES = [SEED, MULTI];

/** The environment of a CLI run: ours, without any HANSARD_* setting of the machine running the tests. */
function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HANSARD_')) env[k] = v;
  return { ...env, NO_COLOR: '1', ...extra };
}

/** Runs `node bin/hansard ARGS` from the repository root against the test server. */
function hansard(args: string[], token?: string): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: cliEnv({ HANSARD_URL: url, ...(token ? { HANSARD_TOKEN: token } : {}) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let err = '';
    child.stdout!.on('data', (b: Buffer) => out.push(b));
    child.stderr!.setEncoding('utf8').on('data', (s: string) => {
      err += s;
    });
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout: Buffer.concat(out), stderr: err }));
  });
}

/** Runs the CLI and expects exit 0; returns stdout as text. */
async function ok(args: string[], token?: string): Promise<string> {
  const r = await hansard(args, token);
  expect(r.code, `hansard ${args.join(' ')} failed:\n${r.stderr}`).toBe(0);
  return r.stdout.toString('utf8');
}

async function api(path: string, token: string): Promise<Response> {
  return fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
}

/** Starts `hansard serve` and resolves with its URL and board link once it printed both. */
function startServer(dataDir: string): Promise<{ url: string; boardLink: string }> {
  server = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data', dataDir], {
    cwd: ROOT,
    env: cliEnv({ HANSARD_BOOTSTRAP_TOKEN: ADMIN }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stderr!.setEncoding('utf8').on('data', (s: string) => {
    serverStderr += s;
  });
  return new Promise((done, fail) => {
    let out = '';
    const timer = setTimeout(
      () => fail(new Error(`hansard serve printed no board link in time:\n${out}\n${serverStderr}`)),
      45_000,
    );
    server.on('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`hansard serve exited with ${code}:\n${out}\n${serverStderr}`));
    });
    server.stdout!.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const serving = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      const link = /(http:\/\/127\.0\.0\.1:\d+\/\?token=hns_[0-9A-Za-z]+)\s*$/m.exec(out);
      if (serving && link) {
        clearTimeout(timer);
        done({ url: serving[1]!, boardLink: link[1]! });
      }
    });
  });
}

/** The counts the importer must reproduce, read from the transcript itself. */
function transcriptCounts(path: string): { prompts: number; toolUses: number; toolResults: number } {
  const counts = { prompts: 0, toolUses: 0, toolResults: 0 };
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const rec = JSON.parse(line) as { type?: string; message?: { content?: unknown } };
    const content = rec.message?.content;
    const blocks = Array.isArray(content) ? (content as Array<{ type?: string }>) : [];
    if (rec.type === 'user') {
      if (typeof content === 'string' || blocks.some((b) => b.type === 'text')) counts.prompts += 1;
      counts.toolResults += blocks.filter((b) => b.type === 'tool_result').length;
    }
    if (rec.type === 'assistant') counts.toolUses += blocks.filter((b) => b.type === 'tool_use').length;
  }
  return counts;
}

function segmentsOf(dir: string): Array<{ w: string; path: string }> {
  return readdirSync(join(ROOT, dir))
    .filter((n) => new RegExp(`^w_${ULID_SOURCE}\\.jsonl$`).test(n))
    .map((n) => ({ w: n.slice(0, -'.jsonl'.length), path: join(ROOT, dir, n) }));
}

function sidOf(dir: string): string {
  return dir.split('/').pop()!;
}

describe('hansard CLI end to end', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'pipe' });
    tmp = mkdtempSync(join(tmpdir(), 'hansard-e2e-'));
    const started = await startServer(join(tmp, 'data'));
    url = started.url;
    boardLink = started.boardLink;
    boardToken = new URL(boardLink).searchParams.get('token')!;
  }, 120_000);

  afterAll(async () => {
    if (server && server.exitCode === null) {
      server.removeAllListeners('exit');
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (server.exitCode === null) server.kill('SIGKILL');
    }
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('serve prints its URL and a board link that carries a board token, not the admin token', () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(boardToken).toMatch(/^hns_[0-9A-Za-z]{43}$/);
    expect(boardToken).not.toBe(ADMIN);
  });

  it('token create makes a report token and an ingest,read token', async () => {
    const report = JSON.parse(await ok(['token', 'create', '--scopes', 'report', '--json'], ADMIN)) as {
      token: string;
      scopes: string[];
    };
    expect(report.scopes).toEqual(['report']);
    reportToken = report.token;
    const ingest = JSON.parse(
      await ok(['token', 'create', '--scopes', 'ingest,read', '--label', 'e2e', '--json'], ADMIN),
    ) as { token: string; scopes: string[] };
    expect([...ingest.scopes].sort()).toEqual(['ingest', 'read']);
    ingestToken = ingest.token;
  });

  it('upload sends both fixtures, and a second upload sends nothing', async () => {
    const first = await ok(['upload', SEED, MULTI], ingestToken);
    for (const dir of FIXTURES) expect(first).toContain(sidOf(dir));

    const again = await ok(['upload', SEED, MULTI], ingestToken);
    const lines = again.trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const l of lines) expect(l).toMatch(/already up to date/);

    for (const dir of FIXTURES) {
      for (const seg of segmentsOf(dir)) {
        const res = await api(`/v1/sessions/${sidOf(dir)}/writers/${seg.w}`, ingestToken);
        expect(res.status).toBe(200);
        const info = (await res.json()) as { length: number; lines: number };
        expect(info.length).toBe(statSync(seg.path).size);
        expect(info.lines).toBe(readFileSync(seg.path, 'utf8').split('\n').length - 1);
      }
    }
  });

  it('session report posts a status with the report token', async () => {
    const out = await ok(
      ['session', 'report', '--session', sidOf(SEED), '--state', 'working', '--note', NOTE],
      reportToken,
    );
    expect(out).toContain('working');
  });

  for (const dir of FIXTURES) {
    for (const flags of [['--format', 'ndjson'], ['--format', 'text'], ['--raw']]) {
      it(`replay ${flags.join(' ')} of ${sidOf(dir)} is the same from the server and from the directory`, async () => {
        const remote = await hansard(['replay', sidOf(dir), ...flags], ingestToken);
        expect(remote.code, remote.stderr).toBe(0);
        const local = await hansard(['replay', dir, ...flags]);
        expect(local.code, local.stderr).toBe(0);
        expect(remote.stdout.length).toBeGreaterThan(0);
        if (flags[1] === 'text' && dir === SEED) {
          // The server's text replay adds the agent's status report as a Declared row (docs/status.md),
          // after the events before it; the transcript's lines are the directory's, byte for byte.
          const extra = remote.stdout.subarray(local.stdout.length).toString();
          expect(remote.stdout.subarray(0, local.stdout.length).equals(local.stdout)).toBe(true);
          expect(extra).toMatch(/^\S+Z {2}declared {8}status\.report {8}Declared: working "[^"]+"\n$/);
        } else expect(remote.stdout.equals(local.stdout)).toBe(true);
      });
    }
  }

  it('GET /v1/board with the board link token lists both sessions and the reported state and note', async () => {
    const res = await api('/v1/board', boardToken);
    expect(res.status).toBe(200);
    const board = (await res.json()) as {
      sessions: Array<{ sid: string; state: string | null; note: string | null }>;
    };
    const bySid = new Map(board.sessions.map((s) => [s.sid, s]));
    for (const dir of FIXTURES) expect(bySid.has(sidOf(dir))).toBe(true);
    expect(bySid.get(sidOf(SEED))).toMatchObject({ state: 'working', note: NOTE });
  });

  it('the board link sets an HttpOnly SameSite=Strict cookie, redirects to / and the page shows the sessions', async () => {
    // as a browser opens a link from the terminal (Sec-Fetch-Site: none); fetch() would be asked to confirm
    const linkUrl = new URL(boardLink);
    const signIn = await navigate({ url: linkUrl.origin }, `${linkUrl.pathname}${linkUrl.search}`);
    expect([302, 303]).toContain(signIn.status);
    expect(signIn.headers.get('location')).toBe('/');
    const setCookie = signIn.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).not.toContain(ADMIN);
    const cookie = setCookie.split(';')[0]!;

    const page = await fetch(`${url}/`, { headers: { cookie }, redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = await page.text();
    for (const dir of FIXTURES) expect(html).toContain(sidOf(dir));
    expect(html).toContain('working');
    expect(html).not.toContain(boardToken);

    const anonymous = await fetch(`${url}/`, { redirect: 'manual' });
    expect(anonymous.status).not.toBe(200);
  });

  it('imports the real Claude Code transcript, uploads it, and the server replay has its prompts, actions and results', async () => {
    const out = join(tmp, 'sessions');
    const imported = JSON.parse(await ok(['import', 'claude-code', TRANSCRIPT, '--out', out, '--json'])) as {
      sid: string;
      dir: string;
    };
    expect(imported.sid).toMatch(idPattern('s'));
    await ok(['upload', imported.dir], ingestToken);

    const replay = await hansard(['replay', imported.sid], ingestToken);
    expect(replay.code, replay.stderr).toBe(0);
    const types = replay.stdout
      .toString('utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    const count = (t: string) => types.filter((x) => x === t).length;
    const expected = transcriptCounts(resolve(ROOT, TRANSCRIPT));
    expect(expected.prompts).toBeGreaterThan(0);
    expect(expected.toolUses).toBeGreaterThan(0);
    expect(count('turn.start')).toBe(expected.prompts);
    expect(count('message')).toBe(expected.prompts);
    expect(count('agent.action')).toBe(expected.toolUses);
    expect(count('agent.action_result')).toBe(expected.toolResults);

    const board = (await (await api('/v1/board', boardToken)).json()) as { sessions: Array<{ sid: string }> };
    expect(board.sessions.map((s) => s.sid)).toContain(imported.sid);
  });

  it('replay of something that is neither a directory nor a session id exits 2 with a message', async () => {
    const r = await hansard(['replay', 'not-a-thing'], ingestToken);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not-a-thing');
    expect(r.stdout.length).toBe(0);
  });

  it('upload of a directory that does not exist exits 2', async () => {
    const r = await hansard(['upload', '/nonexistent'], ingestToken);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('/nonexistent');
  });

  it('session report with an unknown state exits 2 and names the allowed states', async () => {
    const r = await hansard(['session', 'report', '--state', 'bogus'], reportToken);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('bogus');
    expect(r.stderr).toContain('working');
  });

  it('upload with a wrong token exits 2 and says the token is the problem', async () => {
    const r = await hansard(['upload', SEED, '--token', `hns_${'x'.repeat(43)}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/token/i);
  });
});

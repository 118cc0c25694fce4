/**
 * Offline capture (issue 11): with the server down, hook events go to the spool and nothing is lost;
 * once it is up, the shipper (`bin/hansard hook ship`, the same process the hooks start detached) sends
 * every event, and the server's replay holds each exactly once, however many times shipping runs.
 * A real `hansard serve` process (harness/serve-process.ts) and real hook processes.
 */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startServeProcess } from '../../../harness/serve-process.js';
import {
  configPath,
  readHookFailures,
  spoolBacklog,
  writeJsonAtomic,
} from '../../../lib/client/capture/state-dir.js';
import { tmpDirs } from '../../support/tmp.js';
import { fixture, pool, runHook, sessionEvents, spoolSessions, useBuiltCli } from './helpers.js';

const cli = useBuiltCli('offline');
const tmp = tmpDirs('hansard-hook-offline-');
const SESSIONS = 2;
const PAIRS = 15;

/** A loopback port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** The server's replay of `sid` as parsed events. */
async function serverReplay(url: string, token: string, sid: string): Promise<Record<string, unknown>[]> {
  const res = await fetch(`${url}/v1/sessions/${sid}/replay?format=ndjson`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  return (await res.text())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('server down, then up', () => {
  it('every hook event reaches the server exactly once, through the shipper', async () => {
    const state = tmp.make();
    writeJsonAtomic(configPath(state), { url: `http://127.0.0.1:${await deadPort()}`, token: 'hns_not_yet' });
    const env = { HANSARD_STATE_DIR: state };
    const start = JSON.parse(fixture('real-client/01-SessionStart.json')) as Record<string, unknown>;
    const prompt = JSON.parse(fixture('real-client/02-UserPromptSubmit.json')) as Record<string, unknown>;
    const pre = JSON.parse(fixture('real-client/03-PreToolUse.hello-from-tool.json')) as Record<
      string,
      unknown
    >;
    const post = JSON.parse(fixture('real-client/06-PostToolUse.hello-from-tool.json')) as Record<
      string,
      unknown
    >;
    const stop = JSON.parse(fixture('real-client/07-Stop.json')) as Record<string, unknown>;
    let hooks = 0;
    await pool(
      Array.from({ length: SESSIONS }, (_, s) => `claude-session-${s}`),
      SESSIONS,
      async (session_id) => {
        const run = async (p: Record<string, unknown>) => {
          const r = await runHook(cli.bin, ['claude-code'], JSON.stringify({ ...p, session_id }), env);
          expect(r.code).toBe(0);
          hooks++;
        };
        await run(start);
        await run({ ...prompt, prompt: `offline prompt of ${session_id}` });
        for (let i = 0; i < PAIRS; i++) {
          await run({ ...pre, tool_use_id: `toolu_${i}`, tool_input: { command: `echo ${i}` } });
          await run({ ...post, tool_use_id: `toolu_${i}`, tool_input: { command: `echo ${i}` } });
        }
        await run(stop);
      },
    );
    expect(hooks).toBe(SESSIONS * (3 + 2 * PAIRS));
    const dirs = spoolSessions(state);
    expect(dirs).toHaveLength(SESSIONS);
    const spooled = new Map(dirs.map((d) => [d.split('/').at(-1)!, sessionEvents(d)]));
    const total = [...spooled.values()].reduce((n, evs) => n + evs.length, 0);
    // writer.start, message, turn.start, 2 per pair, output, turn.end
    expect(total).toBe(SESSIONS * (5 + 2 * PAIRS));
    // Nothing acknowledged: every event waits in the backlog; the detached shippers found no server.
    await waitFor(() => readHookFailures(state).some((f) => f.reason === 'server_unreachable'));
    expect(spoolBacklog(state).reduce((n, b) => n + b.events, 0)).toBe(total);

    const server = await startServeProcess();
    try {
      writeJsonAtomic(configPath(state), { url: server.url, token: server.admin });
      // Twice: a second run (or a shipper racing it) must not send anything again.
      for (let i = 0; i < 2; i++) {
        const r = await runHook(cli.bin, ['ship'], '', env);
        expect(r.code).toBe(0);
      }
      expect(spoolBacklog(state)).toEqual([]);
      for (const [sid, local] of spooled) {
        const remote = await serverReplay(server.url, server.admin, sid);
        expect(remote.map((e) => e.id).sort()).toEqual(local.map((e) => e.id).sort());
        expect(new Set(remote.map((e) => e.id)).size).toBe(remote.length);
      }
    } finally {
      await server.close();
    }
  }, 240_000);
});

async function waitFor(check: () => boolean, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * kill -9 at random points (issue 11): 50 kills, alternating between a hook process (mid-write, holding
 * the session lock, spawning its shipper…) and the uploader (`hansard hook ship`, mid-chunk). Afterwards
 * the shipper runs to the end: every prompt whose hook exited 0 is on the server once, and no event id
 * appears twice there. A real `hansard serve` process and real hook and shipper processes.
 */
import { describe, expect, it } from 'vitest';
import { startServeProcess } from '../../../harness/serve-process.js';
import { deferredSessions } from '../../../lib/client/capture/inbox.js';
import { shipperRunning } from '../../../lib/client/capture/spawn.js';
import {
  configPath,
  readHookFailures,
  spoolBacklog,
  writeJsonAtomic,
} from '../../../lib/client/capture/state-dir.js';
import { tmpDirs } from '../../support/tmp.js';
import { fixture, runHook, sessionEvents, spoolSessions, useBuiltCli } from './helpers.js';

const cli = useBuiltCli('kill');
const tmp = tmpDirs('hansard-hook-kill-');
const KILLS = 50;

describe('kill -9 of the hook or the uploader at random points', () => {
  it('loses no event whose hook exited 0 and duplicates none on the server', async () => {
    const state = tmp.make();
    const env = { HANSARD_STATE_DIR: state };
    const server = await startServeProcess();
    try {
      writeJsonAtomic(configPath(state), { url: server.url, token: server.admin });
      const prompt = JSON.parse(fixture('real-client/02-UserPromptSubmit.json')) as Record<string, unknown>;
      const acked: string[] = [];
      let hookKills = 0;
      let shipperKills = 0;
      // Until 50 processes were killed (a kill that comes after the process ended does not count).
      for (let i = 0; hookKills + shipperKills < KILLS && i < KILLS * 6; i++) {
        const text = `kill-test prompt ${i}`;
        // Every other round a hook that is left alone: the spool grows, so shippers have work to be cut.
        const kill = i % 2 === 0 ? Math.floor(Math.random() * 250) : undefined;
        const r = await runHook(
          cli.bin,
          ['claude-code'],
          JSON.stringify({ ...prompt, prompt: text }),
          env,
          kill,
        );
        if (r.code === 0) acked.push(text);
        else {
          expect(r.signal).toBe('SIGKILL');
          hookKills++;
        }
        if (i % 2 === 1) {
          const s = await runHook(cli.bin, ['ship'], '', env, Math.floor(Math.random() * 400));
          if (s.signal === 'SIGKILL') shipperKills++;
        }
      }
      expect(hookKills + shipperKills).toBe(KILLS);
      expect(Math.min(hookKills, shipperKills)).toBeGreaterThan(5);

      // The detached shippers finish; then ship until the backlog is empty (a killed shipper's lock goes
      // stale after 5 s; a killed hook's deferred payloads are written by the drain first). Deferred
      // payloads are backlog too: a hook that ran past its budget left its prompt in the session's inbox.
      const until = Date.now() + 60_000;
      while (spoolBacklog(state).length > 0 || deferredSessions(state) > 0 || shipperRunning(state)) {
        expect(Date.now()).toBeLessThan(until);
        if (!shipperRunning(state)) await runHook(cli.bin, ['ship'], '', env);
        await new Promise((r) => setTimeout(r, 300));
      }
      const dirs = spoolSessions(state);
      expect(dirs).toHaveLength(1);
      const sid = dirs[0]!.split('/').at(-1)!;
      const res = await fetch(`${server.url}/v1/sessions/${sid}/replay?format=ndjson`, {
        headers: { authorization: `Bearer ${server.admin}` },
      });
      const remote = (await res.text())
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const ids = remote.map((e) => e.id);
      expect(new Set(ids).size).toBe(ids.length);
      const texts = remote.filter((e) => e.type === 'message').map((e) => e.text as string);
      for (const t of acked)
        expect(
          texts.filter((x) => x === t),
          t,
        ).toHaveLength(1);
      expect(new Set(texts).size).toBe(texts.length);
      // The server holds exactly what the spool holds.
      expect(ids.sort()).toEqual(
        sessionEvents(dirs[0]!)
          .map((e) => e.id)
          .sort(),
      );
      expect(readHookFailures(state).filter((f) => f.reason === 'internal')).toEqual([]);
      console.log(
        `kill test: ${hookKills} hooks and ${shipperKills} shippers killed; ${acked.length} acknowledged prompts, ${texts.length} on the server`,
      );
    } finally {
      await server.close();
    }
  }, 600_000);
});

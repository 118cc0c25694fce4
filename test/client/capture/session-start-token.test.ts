/**
 * SessionStart with a server configured (issue 11, seed 000): the real hook process mints a session-bound
 * token for the agent's status reports, names it in `additionalContext`, reuses it at the next
 * SessionStart of the same Claude session, and the token works for a report on that session only.
 * A real `hansard serve` process.
 */
import { describe, expect, it } from 'vitest';
import { startServeProcess } from '../../../harness/serve-process.js';
import { readHookFailures } from '../../../lib/client/capture/state-dir.js';
import { tmpDirs } from '../../support/tmp.js';
import { fixture, runHook, useBuiltCli } from './helpers.js';

const cli = useBuiltCli('session-token');
const tmp = tmpDirs('hansard-hook-token-');

const contextOf = (stdout: string) =>
  (JSON.parse(stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput
    .additionalContext;

describe('SessionStart with a server', () => {
  it('mints a report token bound to the session, reuses it, and the token posts a status report', async () => {
    const server = await startServeProcess();
    try {
      const state = tmp.make();
      const env = { HANSARD_STATE_DIR: state, HANSARD_URL: server.url, HANSARD_TOKEN: server.admin };
      const first = await runHook(cli.bin, ['claude-code'], fixture('real-client/01-SessionStart.json'), env);
      expect(first.code).toBe(0);
      const ctx = contextOf(first.stdout);
      const sid = /recording this session as (s_[0-9A-Z]{26})/.exec(ctx)?.[1];
      const token = /--session-token (hns_\S+)/.exec(ctx)?.[1];
      expect(sid).toBeDefined();
      expect(token).toBeDefined();
      expect(ctx).toContain(`shipped to ${server.url}`);
      expect(readHookFailures(state)).toEqual([]);

      const again = await runHook(
        cli.bin,
        ['claude-code'],
        JSON.stringify({ ...JSON.parse(fixture('real-client/01-SessionStart.json')), source: 'resume' }),
        env,
      );
      expect(contextOf(again.stdout)).toContain(`--session-token ${token}`);

      const report = (s: string) =>
        fetch(`${server.url}/v1/sessions/${s}/status`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ state: 'working', note: 'checking the hook' }),
        });
      expect((await report(sid!)).status).toBeLessThan(300);
      // Bound to this session: another session's report is refused.
      expect((await report('s_01KZVVGRNR3D5V708Z4NPGG11H')).status).toBeGreaterThanOrEqual(400);
    } finally {
      await server.close();
    }
  }, 120_000);
});

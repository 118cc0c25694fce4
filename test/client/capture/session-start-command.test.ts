/**
 * The report command SessionStart gives the agent runs as it is, copied and pasted: it names the same
 * program the hooks run (the absolute node and bin/hansard that `integrations sync` writes), not a bare
 * `hansard` that is usually not on PATH (no `npm link`), and the server the hooks ship to (`--url`) when it
 * is not the default. The real built hook process and a real `hansard serve` process; the line is run
 * through `sh -c` with a PATH that holds no `hansard` and no HANSARD_ variable.
 */
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { startServeProcess } from '../../../harness/serve-process.js';
import { shellLine } from '../../../lib/client/capture/shell-line.js';
import { tmpDirs } from '../../support/tmp.js';
import { fixture, hookEnv, runHook, useBuiltCli } from './helpers.js';

const cli = useBuiltCli('session-command');
const tmp = tmpDirs('hansard-hook-command-');

const contextOf = (stdout: string) =>
  (JSON.parse(stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput
    .additionalContext;

describe('SessionStart names a report command that runs off PATH', () => {
  it('the line names node and bin/hansard as the hook runs them, with --url, and runs as given', async () => {
    const server = await startServeProcess();
    try {
      const state = tmp.make();
      const env = { HANSARD_STATE_DIR: state, HANSARD_URL: server.url, HANSARD_TOKEN: server.admin };
      const start = await runHook(cli.bin, ['claude-code'], fixture('real-client/01-SessionStart.json'), env);
      expect(start.code).toBe(0);
      const ctx = contextOf(start.stdout);
      const line = /^Report progress with: (.+)\.$/m.exec(ctx)?.[1];
      expect(line).toBeDefined();
      const hansard = shellLine([process.execPath, cli.bin]);
      expect(line!.startsWith(`${hansard} session report --session s_`)).toBe(true);
      expect(line).toContain(`--url ${server.url}`);
      const sid = /--session (s_[0-9A-Z]{26})/.exec(line!)![1]!;

      // What an agent does with it: picks a state, writes its note, runs it in its shell.
      const command = line!
        .replace('working|blocked|needs_review|done', 'working')
        .replace('"<one line>"', '"copied from the session context"');
      const run = await new Promise<{ code: number | null; stderr: string }>((done) => {
        const child = execFile(
          '/bin/sh',
          ['-c', command],
          { env: { ...hookEnv({}), PATH: '/usr/bin:/bin' }, cwd: tmp.make() },
          (err, _out, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
        );
        child.stdin?.end();
      });
      expect(run.code, run.stderr).toBe(0);

      const status = await fetch(`${server.url}/v1/sessions/${sid}/status`, {
        headers: { authorization: `Bearer ${server.admin}` },
      });
      expect(status.status).toBe(200);
      expect(JSON.stringify(await status.json())).toContain('copied from the session context');
    } finally {
      await server.close();
    }
  }, 120_000);
});

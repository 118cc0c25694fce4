/**
 * The refusal of an edited, already uploaded line (issue 15): `--json` answers its own code
 * `segment_changed` (not the catch-all `usage`), and the advice is one a person can follow. Followed
 * here, step by step, against a real server on loopback: the server's copy of the segment from the
 * bundle `hansard export` names, put back in place, the change appended as a correction event with the
 * `openSession(…).correct(…)` call the message names, and the upload then goes through and replays the
 * corrected value.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalKeyring } from '../../../lib/audit/local-keyring.js';
import { openSession } from '../../../lib/log/index.js';
import { runHansard } from '../../support/cli.js';
import { useServer } from '../../support/server.js';
import { tmpDirs } from '../../support/tmp.js';

const scratch = tmpDirs('hansard-upload-advice-');
const { keyring } = LocalKeyring.open(scratch.make());
const srv = useServer({ deps: { signer: keyring } });

const cli = (args: string[], cwd = process.cwd()) =>
  runHansard(args, { cwd, env: { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.tenant.admin } });

describe('hansard upload of an edited line', () => {
  it('--json: code segment_changed; the advice, followed, makes the next upload go through', async () => {
    const s = openSession(scratch.make(), { agent: 'coder' });
    const said = s.message({ user_id: 'ann', text: 'the payments worker is down' });
    s.close();
    expect((await cli(['upload', s.dir])).code).toBe(0);
    const original = readFileSync(s.path, 'utf8');
    writeFileSync(s.path, original.replace('is down', 'is up'));

    const refused = await cli(['upload', s.dir, '--json']);
    expect(refused.code).toBe(2);
    const error = JSON.parse(refused.err).error;
    expect(error.code).toBe('segment_changed');
    expect(error.message).toContain(`hansard export ${s.sid} --out ${s.sid}.tar`);
    expect(error.message).toContain(`${s.sid}/segments/${s.w}.jsonl`);
    expect(error.message).toContain(`openSession('${s.dir}', { writerId: '${s.w}' }).correct({`);
    expect(error.message).not.toMatch(/upload the file as a new writer/);

    // Followed: the server's copy back in place, from the bundle the message names.
    const cwd = scratch.make();
    const exported = await cli(['export', s.sid, '--out', `${s.sid}.tar`], cwd);
    expect(exported.code, exported.err).toBe(0);
    execFileSync('tar', ['-xf', join(cwd, `${s.sid}.tar`), '-C', cwd]);
    copyFileSync(join(cwd, s.sid, 'segments', `${s.w}.jsonl`), s.path);
    expect(readFileSync(s.path, 'utf8')).toBe(original);
    openSession(s.dir, { writerId: s.w }).correct({
      target_id: said.id,
      field: 'text',
      value: 'the payments worker is up',
      reason: 'it had restarted',
    });
    const again = await cli(['upload', s.dir]);
    expect(again.code, again.err).toBe(0);
    const replay = await cli(['replay', s.sid]);
    expect(replay.code, replay.err).toBe(0);
    expect(replay.out).toContain('the payments worker is up');
  });
});

/**
 * verify's `empty_reference`: an `action_id` or `turn_id` that is the empty string names nothing, so it
 * is a problem of its own (issue 10 item 1: the old Claude Code importer wrote `action_id: ""` for a
 * result whose call was not in the file, and verify said nothing).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { verifySession } from '../../lib/log/analyse/verify.js';
import { sessionDirSources } from '../../lib/log/index.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-verify-empty-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const SID = 's_01KZVVGRNR3D5V708Z4NPGG11H';
const W = 'w_01KZVVGRNRKM87Z6X6TXYQR7EX';
const ev = (
  seq: number,
  type: string,
  fields: Record<string, unknown>,
  id = `e_01KZVVGRNTBMSD610TK2GA9B${10 + seq}`,
) => ({
  v: 3,
  sid: SID,
  w: W,
  seq,
  id,
  ts: `2026-08-12T20:44:${String(10 + seq).padStart(2, '0')}.000000Z`,
  mono: seq / 1000,
  type,
  ...fields,
  extra: {},
});

it('reports an empty action_id and an empty turn_id as empty_reference, not as clean', async () => {
  const dir = join(root, SID);
  mkdirSync(dir, { recursive: true });
  const lines = [
    ev(1, 'writer.start', { writer_id: W, meta: { agent: 'bot' }, redacted: [] }, W),
    ev(2, 'agent.action_result', {
      action_id: '',
      status: 'ok',
      output: null,
      error: null,
      exit_code: null,
      redacted: [],
    }),
    ev(3, 'turn.end', { turn_id: '', status: 'completed' }),
    ev(4, 'writer.end', { reason: null }),
  ];
  writeFileSync(join(dir, `${W}.jsonl`), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  const r = await verifySession(sessionDirSources(dir), { sid: SID });
  expect(r.problems.map((p) => [p.code, p.seq, p.severity])).toEqual([
    ['empty_reference', 2, 'warning'],
    ['empty_reference', 3, 'warning'],
  ]);
  expect(r.problems[0]!.message).toContain('action_id is empty');
});

/**
 * Attack on usage counted before the index advances (lib/service/usage/project.ts, docs/usage.md "Where
 * totals are kept": "a 2xx means counted too, and a retry of a counted chunk counts nothing"): a chunk
 * counted whose advance then failed (nothing stored, 507) is followed at the same offset by OTHER bytes,
 * the ones the server does acknowledge. Here the counted chunk is the agent's (another ingest token than
 * the hook's: a foreign chunk, which since the mixed_tokens rule also marks the writer untrusted from its
 * offset) and the acknowledged one is the hook's own. Over real HTTP on loopback with the real SQLite
 * store, its advance failing once when told (a full disk). On DynamoDB with two server instances (no
 * shared writer lock) the same order would need no fault: the agent's count landing first and the hook's
 * advance winning (reasoned from the code, not tested here).
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId, openSession } from '../../lib/log/index.js';
import { FsDigestStore } from '../../lib/store/fs/digest-store.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import type { WriterAdvance } from '../../lib/store/index.js';
import { SqliteStateStore } from '../../lib/store/sqlite/state-store.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk } from '../support/stored.js';

const faults = { advanceFails: 0 };
class FaultyStore extends SqliteStateStore {
  override async advanceWriter(t: string, s: string, w: string, e: number, n: WriterAdvance): Promise<void> {
    if (faults.advanceFails > 0) {
      faults.advanceFails -= 1;
      throw Object.assign(new Error('SQLITE_FULL: database or disk is full'), { code: 'SQLITE_FULL' });
    }
    return super.advanceWriter(t, s, w, e, n);
  }
}
const srv = useServer({
  tokens: { capture: ['ingest'], agent: ['ingest'] },
  mayLog: /SQLITE_FULL|insufficient_storage/,
  stores: (d) => {
    mkdirSync(d, { recursive: true });
    return {
      segments: new FsSegmentStore(d),
      state: new FaultyStore(join(d, 'state.sqlite')),
      digests: new FsDigestStore(d),
    };
  },
});
const note = (id: string, out: number, pad = '') => ({
  extra: {
    import_kind: 'token_usage',
    usage_source: 'claude_message',
    message_id: id,
    model: 'claude-sonnet-4-5',
    usage: { input_tokens: 10, output_tokens: out },
    pad,
  },
});
// Was a DEFECT (fixed: the record keeps the counted chunk's sha256 and rebuilds on a mismatch): the agent's chunk was refused (507, "nothing of this chunk was stored"), yet its count stays:
// the writer's usage record says its bytes up to offset + 2,416 are counted and untrusted from the offset
// on. The hook's own chunk at that offset, acknowledged 201, is then taken for "counted already" (the
// record's `upto` is past its end) and its message msg_2 (200 output tokens) is never counted: silently,
// not even as an unknown turn; and a recompute changes nothing, because it keeps the mark the refused
// chunk left. What should happen: a count stands only for the bytes the index acknowledged (the record
// knows which bytes it counted, e.g. the chunk's sha256, and a different chunk at that offset is folded
// afresh from the acknowledged state), so the session counts msg_1 and msg_2 (300 output tokens) and is
// not marked mixed (the index says it is not).
describe('a count left by a refused chunk', () => {
  it('does not swallow the acknowledged chunk that took its offset', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const root = mkdtempSync(join(srv.workDir, 'p-'));
    const sid = newId('s');
    const hook = openSession(root, { sid, agent: 'claude-code', provenance: 'hook' });
    const m = hook.message({ user_id: 'priya', text: 'go' });
    const t = hook.turnStart({ context_message_ids: [m.id] });
    hook.note({ author: 'claude-code', text: 'token usage' }, note('msg_1', 100));
    hook.close();
    const head = readLocal({ sid, w: hook.w, dir: hook.dir, path: hook.path }).bytes;
    expect((await postChunk(srv, srv.tokens.capture, sid, hook.w, 0, head)).status).toBe(201);
    const forged = openSession(mkdtempSync(join(srv.workDir, 'f-')), {
      sid,
      writerId: hook.w,
      agent: 'claude-code',
      provenance: 'hook',
    });
    const fx = readLocal({ sid, w: hook.w, dir: forged.dir, path: forged.path }).bytes.length;
    forged.note({ author: 'claude-code', text: 'token usage' }, note('msg_forged', 5, 'x'.repeat(2000)));
    forged.close();
    const X = readLocal({ sid, w: hook.w, dir: forged.dir, path: forged.path }).bytes.subarray(fx);
    faults.advanceFails = 1;
    const a = await postChunk(srv, srv.tokens.agent, sid, hook.w, head.length, X);
    expect(a.status, a.text).toBe(507);
    const again = openSession(hook.dir, { sid, writerId: hook.w, agent: 'claude-code', provenance: 'hook' });
    again.note({ author: 'claude-code', text: 'token usage' }, note('msg_2', 200));
    again.turnEnd({ turn_id: t.id, status: 'completed' });
    again.close();
    const Y = readLocal({ sid, w: hook.w, dir: again.dir, path: again.path }).bytes.subarray(head.length);
    const b = await postChunk(srv, srv.tokens.capture, sid, hook.w, head.length, Y);
    expect(b.status, b.text).toBe(201);
    expect(Y.length).toBeLessThan(X.length);
    const w = await srv.stores.state.getWriter(srv.tenant.name, sid, hook.w);
    expect(w?.length).toBe(head.length + Y.length);
    expect(w?.mixed_tokens).toBe(false);
    const u = await request(srv, 'GET', `/v1/sessions/${sid}/usage`, { token: srv.admin });
    expect(u.json.total).toMatchObject({ output_tokens: 300, records: 2 });
    const r = await request(srv, 'POST', `/v1/usage/recompute?sid=${sid}`, { token: srv.admin });
    expect(r.status, r.text).toBe(200);
    const u2 = await request(srv, 'GET', `/v1/sessions/${sid}/usage`, { token: srv.admin });
    expect(u2.json.total).toMatchObject({ output_tokens: 300, records: 2 });
  });
});

/**
 * Attack on usage and cost (issue 27, docs/usage.md "The model's own words"): can an agent make its own
 * words count as cost, or poison the totals with figures no runtime writes? Over real HTTP on loopback
 * with the real SQLite store, segments written by the real library writer (some lines edited by hand
 * where the writer could not write them: `1e999`), uploaded by tokens minted as an admin would, the
 * totals read back from `GET /v1/sessions/{sid}/usage` and `GET /v1/usage`, and `POST /v1/usage/recompute`
 * checked to change nothing that arrival counted.
 *
 * What holds is an ordinary test; what gives way is `it.fails` with a comment saying what should happen.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId, openSession, type ProvenanceKind, type SessionWriter } from '../../lib/log/index.js';
import { WRITER_BUCKETS_MAX } from '../../lib/store/index.js';
import { request } from '../support/http.js';
import { type LocalSegment, readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk } from '../support/stored.js';

const srv = useServer({
  tokens: { capture: ['ingest'], agent: ['ingest'], reader: ['read'] },
});

/** Today (UTC) at 09:00 plus `s` seconds, µs: the tenant range of today holds every record. */
const base = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate(), 9);
const TODAY = new Date(base).toISOString().slice(0, 10);
let tick = 0;
const at = () => (base + ++tick * 1000) * 1000;

function writer(provenance: ProvenanceKind | undefined, agent: string, sid?: string): SessionWriter {
  mkdirSync(srv.workDir, { recursive: true });
  const dir = mkdtempSync(join(srv.workDir, 'usage-forge-'));
  return openSession(dir, { sid: sid ?? newId('s'), agent, ...(provenance ? { provenance } : {}) });
}

const segOf = (w: SessionWriter): LocalSegment => readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path });

/** A Claude message's usage note: input 10 + cache write 1,000 + cache read 5,000 (6,010), output `out`. */
function claudeNote(w: SessionWriter, id: string, out: number, more: Record<string, unknown> = {}): void {
  w.note(
    { author: 'claude-code', text: 'token usage' },
    {
      at: at(),
      extra: {
        import_kind: 'token_usage',
        usage_source: 'claude_message',
        message_id: id,
        model: 'claude-sonnet-4-5',
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 1000,
          cache_read_input_tokens: 5000,
          output_tokens: out,
        },
        ...more,
      },
    },
  );
}

/** A turn answering `user` with `notes` usage notes in it. */
function turnWith(w: SessionWriter, user: string, notes: () => void): void {
  const m = w.message({ user_id: user, text: 'go on' }, { at: at() });
  const t = w.turnStart({ context_message_ids: [m.id] }, { at: at() });
  notes();
  w.turnEnd({ turn_id: t.id, status: 'completed' }, { at: at() });
}

async function send(
  seg: LocalSegment | { sid: string; w: string; bytes: Buffer },
  token: string,
  offset = 0,
) {
  const a = await postChunk(srv, token, seg.sid, seg.w, offset, seg.bytes.subarray(offset));
  expect(a.status, a.text).toBe(201);
  return a;
}

async function usageOf(sid: string, q = '') {
  const a = await request(srv, 'GET', `/v1/sessions/${sid}/usage${q}`, { token: srv.admin });
  expect(a.status, a.text).toBe(200);
  return a.json;
}

/** The recompute of one session: arrival must have counted what a fresh fold counts. */
async function recomputeChangesNothing(sid: string): Promise<void> {
  const r = await request(srv, 'POST', `/v1/usage/recompute?sid=${sid}`, { token: srv.admin });
  expect(r.status, r.text).toBe(200);
  expect(r.json).toMatchObject({ changed_writers: 0, changed_buckets: 0 });
}

/** msg_X with output 212: 10×3 + 1,000×3.75 + 5,000×0.30 + 212×15 = 8,460 µ$ (claude-sonnet-4-5, genai-prices 0.1.8). */
const ONE_MESSAGE_MICROS = 8_460;

describe("the model's own words are no cost", () => {
  it('a declared writer beside the hook writer: its notes count nothing, its turns stay unknown, in the session and the tenant', async () => {
    const hook = writer('hook', 'claude-code');
    turnWith(hook, 'priya', () => claudeNote(hook, 'msg_real', 212));
    hook.close();
    const declared = writer('declared', 'claude-code', hook.sid);
    turnWith(declared, 'priya', () => {
      for (let i = 0; i < 5; i++) claudeNote(declared, `msg_mine_${i}`, 100_000, { cost_usd: 900 });
    });
    declared.close();
    const tenantBefore = (
      await request(srv, 'GET', `/v1/usage?group_by=agent&from=${TODAY}&to=${TODAY}`, { token: srv.admin })
    ).json;
    await send(segOf(hook), srv.tokens.capture);
    await send(segOf(declared), srv.tokens.agent);
    const r = await usageOf(hook.sid, '?by=writer');
    expect(r.total).toMatchObject({
      cost_micros: ONE_MESSAGE_MICROS,
      records: 1,
      reported_cost_usd: null,
      turns: 2,
      unknown_turns: 1,
    });
    const declaredGroup = r.groups.find((g: { key: string }) => g.key === declared.w);
    expect(declaredGroup).toMatchObject({ records: 0, cost_micros: null, turns: 1, unknown_turns: 1 });
    const tenantAfter = (
      await request(srv, 'GET', `/v1/usage?group_by=agent&from=${TODAY}&to=${TODAY}`, { token: srv.admin })
    ).json;
    expect(tenantAfter.total.cost_micros - (tenantBefore.total.cost_micros ?? 0)).toBe(ONE_MESSAGE_MICROS);
    await recomputeChangesNothing(hook.sid);
  });

  it('a declared writer cannot un-declare itself with a second writer.start saying hook', async () => {
    const w = writer('declared', 'claude-code');
    // a second writer.start in the same segment, now claiming the hook wrote it
    w.note({ author: 'x', text: 'placeholder' }, { at: at() });
    turnWith(w, 'priya', () => claudeNote(w, 'msg_after', 212));
    w.close();
    const seg = segOf(w);
    const lines = seg.bytes.toString('utf8').split('\n');
    const start = lines[0]!;
    const second = start
      .replace('"seq":1,', '"seq":2,')
      .replace(/"id":"w_[0-9A-Z]+"/, `"id":"${newId('e')}"`)
      .replace('"provenance":"declared"', '"provenance":"hook"');
    const placeholder = lines[1]!;
    lines[1] = second.replace(/"ts":"[^"]+"/, placeholder.match(/"ts":"[^"]+"/)![0]);
    const forged = { sid: seg.sid, w: seg.w, bytes: Buffer.from(lines.join('\n')) };
    const a = await postChunk(srv, srv.tokens.agent, forged.sid, forged.w, 0, forged.bytes);
    if (a.status === 201) {
      // stored: the writer is still declared for usage
      const r = await usageOf(seg.sid);
      expect(r.total).toMatchObject({ records: 0, turns: 1, unknown_turns: 1 });
    } else {
      // or refused as a malformed segment (a writer.start past seq 1)
      expect(a.status, a.text).toBe(400);
    }
  });

  // Was a defect (the appended note of 1,000,000 output tokens counted, $15): a chunk of another token
  // than the writer's first marks its usage record (lib/service/usage/project.ts `untrustFrom`), and from
  // that byte on nothing counts, on arrival and in a recompute alike; what the first token sent stands.
  it("the agent's token appending usage notes to the hook's own writer (mixed_tokens) adds no cost", async () => {
    const hook = writer('hook', 'claude-code');
    turnWith(hook, 'priya', () => claudeNote(hook, 'msg_real', 212));
    hook.close();
    const before = segOf(hook).bytes.length;
    await send(segOf(hook), srv.tokens.capture);
    const again = openSession(hook.dir, {
      sid: hook.sid,
      writerId: hook.w,
      agent: 'claude-code',
      provenance: 'hook',
    });
    turnWith(again, 'priya', () => claudeNote(again, 'msg_invented', 1_000_000));
    again.close();
    await send(segOf(again), srv.tokens.agent, before);
    // the server knows: the writer index marks the writer as appended to by another token
    expect((await srv.stores.state.getWriter(srv.tenant.name, hook.sid, hook.w))?.mixed_tokens).toBe(true);
    const r = await usageOf(hook.sid);
    expect(r.total.cost_micros).toBe(ONE_MESSAGE_MICROS);
    // and a recompute cuts at the same byte: nothing changes
    const re = await request(srv, 'POST', `/v1/usage/recompute?sid=${hook.sid}`, { token: srv.admin });
    expect(re.json).toMatchObject({ writers: 1, changed_writers: 0 });
    expect((await usageOf(hook.sid)).total.cost_micros).toBe(ONE_MESSAGE_MICROS);
  });

  // DEFECT (the same one test/attack/verdict-provenance-forge.test.ts keeps as a FAULT for verdicts):
  // provenance is what the bytes claim. An agent's own ingest token uploads a new writer of the session
  // whose writer.start says `provenance: "hook"` and whose notes repeat the hook writer's message ids with
  // bigger figures (or copy them as they are): every writer is folded on its own (the message-id rule is
  // per writer), so the session's cost doubles and more. It should not count: usage should be taken only
  // from writers whose observed provenance the server granted (a capture token's), or a message id
  // counted once per session.
  it.fails("a copy of the hook writer's usage notes in a writer the agent uploaded, claiming hook, adds no cost", async () => {
    const hook = writer('hook', 'claude-code');
    turnWith(hook, 'priya', () => claudeNote(hook, 'msg_real', 212));
    hook.close();
    await send(segOf(hook), srv.tokens.capture);
    const liar = writer('hook', 'claude-code', hook.sid);
    turnWith(liar, 'priya', () => claudeNote(liar, 'msg_real', 212));
    liar.close();
    await send(segOf(liar), srv.tokens.agent);
    const r = await usageOf(hook.sid);
    expect(r.total.cost_micros).toBe(ONE_MESSAGE_MICROS);
  });
});

/** A segment with one note whose `usage` object's text is `usage` verbatim (JSON the writer could not write). */
function rawUsageSegment(usageJson: string, extra = ''): LocalSegment {
  const w = writer('hook', 'claude-code');
  turnWith(w, 'priya', () => claudeNote(w, 'msg_raw', 424242));
  w.close();
  const seg = segOf(w);
  const text = seg.bytes
    .toString('utf8')
    .replace(/"usage":\{[^}]*"output_tokens":424242\}/, `"usage":${usageJson}${extra}`);
  expect(text).toContain(usageJson);
  const bytes = Buffer.from(text);
  return { ...seg, bytes, lines: [] };
}

describe('figures no runtime writes', () => {
  const cases: [string, string, string?][] = [
    ['1e999 (Infinity on parse)', '{"input_tokens":1e999,"output_tokens":1e999}'],
    ['1e300', '{"input_tokens":1e300,"output_tokens":1e300}'],
    ['negative', '{"input_tokens":-5000,"output_tokens":-1}'],
    ['fractions', '{"input_tokens":0.5,"output_tokens":1.25}'],
    ['strings', '{"input_tokens":"100","output_tokens":"7"}'],
    ['-0 and 1e12+1', '{"input_tokens":-0,"output_tokens":1000000000001}'],
    ['a reported cost of 1e999', '{"input_tokens":10,"output_tokens":5}', ',"cost_usd":1e999'],
    ['a reported cost negative', '{"input_tokens":10,"output_tokens":5}', ',"cost_usd":-1e300'],
  ];
  for (const [what, usage, extra] of cases) {
    it(`${what}: stored, every total finite and no figure poisoned, recompute agrees`, async () => {
      const seg = rawUsageSegment(usage, extra ?? '');
      await send(seg, srv.tokens.capture);
      const r = await usageOf(seg.sid, '?by=turn');
      const t = r.total;
      for (const k of ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens']) {
        expect(Number.isSafeInteger(t[k]), `${k}=${t[k]}`).toBe(true);
        expect(t[k]).toBeGreaterThanOrEqual(0);
        expect(t[k]).toBeLessThanOrEqual(1e12 + 6000);
      }
      if (t.cost_micros !== null) {
        expect(Number.isSafeInteger(t.cost_micros)).toBe(true);
        expect(t.cost_micros).toBeGreaterThanOrEqual(0);
      }
      if (t.reported_cost_usd !== null) {
        expect(Number.isFinite(t.reported_cost_usd)).toBe(true);
        expect(t.reported_cost_usd).toBeGreaterThanOrEqual(0);
        expect(t.reported_cost_usd).toBeLessThanOrEqual(1_000_000);
      }
      await recomputeChangesNothing(seg.sid);
      // the tenant's totals still answer, finite
      const tenant = await request(srv, 'GET', `/v1/usage?group_by=model&from=${TODAY}&to=${TODAY}`, {
        token: srv.tokens.reader,
      });
      expect(tenant.status, tenant.text).toBe(200);
      expect(Number.isSafeInteger(tenant.json.total.input_tokens)).toBe(true);
    });
  }

  it('a writer then keeps counting: a good note after the poisoned ones is counted exactly', async () => {
    const w = writer('hook', 'claude-code');
    turnWith(w, 'priya', () => {
      claudeNote(w, 'msg_bad', 424242);
      claudeNote(w, 'msg_good', 212);
    });
    w.close();
    const seg = segOf(w);
    const bytes = Buffer.from(
      seg.bytes
        .toString('utf8')
        .replace(
          /"usage":\{[^}]*"output_tokens":424242\}/,
          '"usage":{"input_tokens":1e999,"output_tokens":-1e999}',
        ),
    );
    // a line per chunk, as the shipper sends them
    let off = 0;
    for (const line of bytes.toString('utf8').split(/(?<=\n)/)) {
      const a = await postChunk(srv, srv.tokens.capture, seg.sid, seg.w, off, line);
      expect(a.status, a.text).toBe(201);
      off += Buffer.byteLength(line);
    }
    const r = await usageOf(seg.sid);
    expect(r.total.cost_micros).toBe(ONE_MESSAGE_MICROS);
    expect(r.total.output_tokens).toBe(212);
    await recomputeChangesNothing(seg.sid);
  });
});

describe('names and keys without bound', () => {
  it('a model, a person and an agent of 200,000 characters: stored cut, the answers small, recompute agrees', async () => {
    const huge = (c: string) => c.repeat(200_000);
    const w = writer('hook', huge('a'));
    turnWith(w, huge('p'), () => claudeNote(w, huge('m'), 212, { model: `claude-${huge('x')}` }));
    w.close();
    const seg = segOf(w);
    const up = await postChunk(srv, srv.tokens.capture, seg.sid, seg.w, 0, seg.bytes);
    if (up.status !== 201) {
      // a line past the server's line limit is refused whole, with a clear error
      expect(up.status, up.text).toBe(413);
      expect(up.json.error.code).toBeTruthy();
      return;
    }
    const r = await request(srv, 'GET', `/v1/sessions/${seg.sid}/usage?by=person`, { token: srv.admin });
    expect(r.status).toBe(200);
    expect(r.text.length).toBeLessThan(4_000);
    const tenant = await request(srv, 'GET', `/v1/usage?group_by=agent&from=${TODAY}&to=${TODAY}`, {
      token: srv.admin,
    });
    expect(tenant.status).toBe(200);
    for (const g of tenant.json.groups as { key: string }[]) expect(g.key.length).toBeLessThanOrEqual(200);
    await recomputeChangesNothing(seg.sid);
  });

  it(`${WRITER_BUCKETS_MAX * 2} models and people in one writer: counted exactly, its buckets capped, tenant equal to the session`, async () => {
    const w = writer('hook', 'claude-code');
    const n = WRITER_BUCKETS_MAX * 2;
    for (let i = 0; i < n; i++)
      turnWith(w, `person-${i}`, () => claudeNote(w, `msg_${i}`, 1, { model: `model-${i}` }));
    w.close();
    const seg = segOf(w);
    const tenantBefore = (
      await request(srv, 'GET', `/v1/usage?group_by=model&from=${TODAY}&to=${TODAY}`, { token: srv.admin })
    ).json;
    await send(seg, srv.tokens.capture);
    const r = await usageOf(seg.sid, '?by=person');
    // unknown models: unpriced, tokens counted
    expect(r.total).toMatchObject({
      records: n,
      unpriced_records: n,
      turns: n,
      unknown_turns: 0,
      output_tokens: n,
    });
    expect(r.total.input_tokens).toBe(n * 6_010);
    const tenant = (
      await request(srv, 'GET', `/v1/usage?group_by=model&from=${TODAY}&to=${TODAY}`, { token: srv.admin })
    ).json;
    expect(tenant.total.records - tenantBefore.total.records).toBe(n);
    expect(tenant.total.input_tokens - tenantBefore.total.input_tokens).toBe(n * 6_010);
    expect(tenant.groups.length).toBeLessThanOrEqual(tenantBefore.groups.length + WRITER_BUCKETS_MAX + 1);
    await recomputeChangesNothing(seg.sid);
  });

  it('the replacement window: a streamed repeat within 32 ids replaces, one 40 ids later is a new record (as documented)', async () => {
    const w = writer('hook', 'claude-code');
    turnWith(w, 'priya', () => {
      claudeNote(w, 'msg_first', 1);
      claudeNote(w, 'msg_first', 212); // replaces
      for (let i = 0; i < 40; i++) claudeNote(w, `msg_fill_${i}`, 1, { model: 'no-such-model' });
      claudeNote(w, 'msg_first', 212); // past the window: counted again
    });
    w.close();
    const seg = segOf(w);
    await send(seg, srv.tokens.capture);
    const r = await usageOf(seg.sid, '?by=model');
    const sonnet = r.by_model.find((m: { model: string }) => m.model === 'claude-sonnet-4-5');
    expect(sonnet).toMatchObject({ records: 2, cost_micros: 2 * ONE_MESSAGE_MICROS });
    await recomputeChangesNothing(seg.sid);
  });
});

import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  decodeEvent,
  isId,
  type LogEvent,
  MAX_FIELD_BYTES,
  newSessionId,
  openSession,
  parseTs,
  type RecordedEvent,
  readSegmentFile,
  type SegmentItem,
  serializeEvent,
} from '../../lib/log/index.js';

const TS_FORMAT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const CHILD = resolve('test/fixtures/multi-writer-child.ts');

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'hansard-writer-'));
});
afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

async function readItems(path: string): Promise<SegmentItem[]> {
  const items: SegmentItem[] = [];
  for await (const item of readSegmentFile(path)) items.push(item);
  return items;
}

async function readEvents(path: string): Promise<RecordedEvent[]> {
  const items = await readItems(path);
  expect(items.filter((i) => i.kind === 'problem')).toEqual([]);
  return items.flatMap((i) => (i.kind === 'event' ? [i.event] : []));
}

/** A writer that has written one event of every type. */
function writeEveryType(dir: string) {
  const s = openSession(dir, { agent: 'test-bot', host: 'demo-host', pid: 12345 });
  const events: LogEvent[] = [];
  events.push(s.participantJoin({ user_id: 'priya', display_name: 'Priya' }));
  const m = s.message({ user_id: 'priya', text: 'restart the payments worker' });
  events.push(m);
  const t = s.turnStart({ context_message_ids: [m.id] });
  events.push(t);
  const a = s.action({ turn_id: t.turn_id, tool: 'Bash', input: { command: 'ls' }, caused_by: [m.id] });
  events.push(a);
  events.push(s.actionResult({ action_id: a.id, status: 'ok', output: 'a\nb\n', exit_code: 0 }));
  events.push(s.output({ turn_id: t.turn_id, text: 'done', caused_by: [m.id] }));
  events.push(s.turnEnd({ turn_id: t.turn_id, status: 'completed' }));
  events.push(s.note({ author: 'priya', text: 'looks good' }));
  events.push(s.correct({ target_id: t.turn_id, field: 'status', value: 'failed', reason: 'it raised' }));
  events.push(s.participantLeave({ user_id: 'priya' }));
  events.push(s.end({ reason: 'done' }));
  return { s, events };
}

describe('openSession writes a segment', () => {
  it('numbers seq from 1 up by 1, stamps ts as YYYY-MM-DDTHH:MM:SS.ffffffZ and keeps mono non-decreasing', async () => {
    const { s } = writeEveryType(tmp);
    const events = await readEvents(s.path);
    expect(events).toHaveLength(12);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    for (const e of events) {
      expect(e.ts).toMatch(TS_FORMAT);
      expect(parseTs(e.ts)?.hasZone).toBe(true);
      expect(e.v).toBe(3);
      expect(e.sid).toBe(s.sid);
      expect(e.w).toBe(s.w);
    }
    for (let i = 1; i < events.length; i++) {
      expect(events[i]!.mono).toBeGreaterThanOrEqual(events[i - 1]!.mono);
    }
    expect(events[0]!.mono).toBeGreaterThanOrEqual(0);
  });

  it('creates <dir>/<sid>/<w>.jsonl under a parent folder and writes into a directory named by its sid', () => {
    const a = openSession(tmp, { agent: 'a' });
    expect(isId('s', a.sid)).toBe(true);
    expect(a.dir).toBe(join(tmp, a.sid));
    expect(a.path).toBe(join(tmp, a.sid, `${a.w}.jsonl`));
    a.end();
    const b = openSession(a.dir, { agent: 'b' });
    expect(b.sid).toBe(a.sid);
    b.end();
    expect(readdirSync(a.dir).sort()).toEqual([`${a.w}.jsonl`, `${b.w}.jsonl`].sort());
  });

  it('never lets the default clock step ts backwards within a writer', async () => {
    const s = openSession(tmp, { agent: 'fast' });
    for (let i = 0; i < 3000; i++) s.note({ author: 'fast', text: `n${i}` });
    s.end();
    const events = await readEvents(s.path);
    let backwards = 0;
    for (let i = 1; i < events.length; i++) if (events[i]!.tsMicros! < events[i - 1]!.tsMicros!) backwards++;
    expect(backwards).toBe(0);
  });

  it('gives each event its id prefix: writer.start w_ (the writer id), message m_, turn.start its turn_id t_, action a_, others e_', async () => {
    const { s } = writeEveryType(tmp);
    const events = await readEvents(s.path);
    const byType = new Map(events.map((e) => [e.type, e]));
    expect(byType.get('writer.start')!.id).toBe(s.w);
    expect(byType.get('writer.start')!.obj.writer_id).toBe(s.w);
    expect(isId('m', byType.get('message')!.id)).toBe(true);
    const t = byType.get('turn.start')!;
    expect(isId('t', t.id)).toBe(true);
    expect(t.obj.turn_id).toBe(t.id);
    expect(isId('a', byType.get('agent.action')!.id)).toBe(true);
    for (const type of [
      'participant.join',
      'agent.action_result',
      'agent.output',
      'turn.end',
      'note',
      'correction',
      'participant.leave',
      'writer.end',
    ]) {
      expect(isId('e', byType.get(type)!.id), type).toBe(true);
    }
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  });

  it('ends every line with a newline and returns events that serialize to exactly the lines written', () => {
    const { s, events } = writeEveryType(tmp);
    const text = readFileSync(s.path, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(12);
    expect(lines.slice(1)).toEqual(events.map((e) => serializeEvent(e)));
  });

  it('records writer.start meta: agent, app, version, and the host and pid it is told', async () => {
    const { s } = writeEveryType(tmp);
    const [start] = await readEvents(s.path);
    expect(start!.raw).toContain('"meta":{"agent":"test-bot","app":null,"hansard_version":');
    expect(start!.obj.meta).toMatchObject({ agent: 'test-bot', app: null, host: 'demo-host', pid: 12345 });
  });

  it('refuses to write after end()', () => {
    const s = openSession(tmp);
    s.end();
    expect(() => s.note({ author: 'x', text: 'late' })).toThrow(/closed/);
  });
});

describe('reopening a segment', () => {
  it('continues seq from the last line without writing writer.start again', async () => {
    const a = openSession(tmp, { agent: 'bot' });
    a.note({ author: 'bot', text: 'one' });
    a.close();
    const b = openSession(a.dir, { writerId: a.w });
    expect(b.path).toBe(a.path);
    b.note({ author: 'bot', text: 'two' });
    b.end();
    const events = await readEvents(a.path);
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [1, 'writer.start'],
      [2, 'note'],
      [3, 'note'],
      [4, 'writer.end'],
    ]);
  });

  it('ends a torn last line with a newline first, keeps it a separate line and continues seq from the last good line', async () => {
    const a = openSession(tmp, { agent: 'bot' });
    a.note({ author: 'bot', text: 'one' });
    const last = a.note({ author: 'bot', text: 'two' });
    a.close();
    const torn = serializeEvent({ ...last, seq: 4, text: 'killed mid-write' }).slice(0, 70);
    appendFileSync(a.path, torn);

    const b = openSession(a.dir, { writerId: a.w });
    b.note({ author: 'bot', text: 'three' });
    b.end();

    const lines = readFileSync(a.path, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(6);
    expect(lines[3]).toBe(torn);
    const items = await readItems(a.path);
    const problems = items.flatMap((i) => (i.kind === 'problem' ? [i.problem] : []));
    expect(problems).toHaveLength(1);
    expect(['truncated_line', 'malformed_line']).toContain(problems[0]!.code);
    expect(problems[0]!.line).toBe(4);
    const events = items.flatMap((i) => (i.kind === 'event' ? [i.event] : []));
    expect(events.map((e) => [e.line, e.seq, e.type])).toEqual([
      [1, 1, 'writer.start'],
      [2, 2, 'note'],
      [3, 3, 'note'],
      [5, 4, 'note'],
      [6, 5, 'writer.end'],
    ]);
  });

  it('counts a last line that is a whole event missing only its newline', async () => {
    const a = openSession(tmp);
    const last = a.note({ author: 'bot', text: 'one' });
    a.close();
    appendFileSync(a.path, serializeEvent({ ...last, seq: 3, id: 'e_01KZVVGRNTBMSD610TK2GA9BFS' }));
    const b = openSession(a.dir, { writerId: a.w });
    b.end();
    const events = await readEvents(a.path);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });

  it('does not add a newline to a segment that ends with one', () => {
    const a = openSession(tmp);
    a.close();
    const before = readFileSync(a.path, 'utf8');
    openSession(a.dir, { writerId: a.w }).close();
    expect(readFileSync(a.path, 'utf8')).toBe(before);
  });
});

describe('field limits', () => {
  // The limit is on a field's JSON encoding in UTF-8 bytes, quotes included.
  const fits = MAX_FIELD_BYTES - 2;

  it('cuts a string field over 1 MiB and names it in truncated', async () => {
    const s = openSession(tmp);
    const big = 'x'.repeat(MAX_FIELD_BYTES + 10);
    const ev = s.message({ user_id: 'priya', text: big });
    s.end();
    expect(ev.text).toHaveLength(fits);
    expect(ev.truncated).toEqual(['text']);
    const [, msg] = await readEvents(s.path);
    const decoded = decodeEvent(msg!);
    expect(decoded.truncated).toEqual(['text']);
    expect((decoded as { text: string }).text).toBe(big.slice(0, fits));
    expect(serializeEvent(decoded)).toBe(msg!.raw);
  });

  it('cuts a JSON value whose text is over 1 MiB and leaves fields that fit alone', async () => {
    const s = openSession(tmp);
    const t = s.turnStart();
    const a = s.action({
      turn_id: t.turn_id,
      tool: 'Write',
      input: { content: 'y'.repeat(MAX_FIELD_BYTES) },
    });
    const small = s.note({ author: 'bot', text: 'y'.repeat(fits) });
    s.end();
    expect(a.truncated).toEqual(['input']);
    expect(small.truncated).toBeUndefined();
    const events = await readEvents(s.path);
    expect(events[2]!.obj.truncated).toEqual(['input']);
    expect(Buffer.byteLength(JSON.stringify(events[2]!.obj.input))).toBeLessThanOrEqual(MAX_FIELD_BYTES);
    expect(events[3]!.obj).not.toHaveProperty('truncated');
  });

  it('measures bytes after JSON escaping, so control characters and multi-byte text cannot make a line over the chunk limit', async () => {
    const s = openSession(tmp);
    const ctl = s.note({ author: 'bot', text: '\u0001'.repeat(MAX_FIELD_BYTES) });
    const cjk = s.note({ author: 'bot', text: '漢'.repeat(MAX_FIELD_BYTES / 2) });
    const emoji = s.note({ author: 'bot', text: `${'a'.repeat(fits - 1)}😀` });
    s.end();
    expect(ctl.truncated).toEqual(['text']);
    expect(cjk.truncated).toEqual(['text']);
    expect(emoji.text).toBe('a'.repeat(fits - 1)); // never half a surrogate pair
    for (const l of readFileSync(s.path, 'utf8').split('\n').filter(Boolean)) {
      expect(Buffer.byteLength(l)).toBeLessThan(MAX_FIELD_BYTES + 4096);
    }
  });
});

describe('null and [] stay different facts', () => {
  it('survive write, read and decode for context_message_ids and caused_by', async () => {
    const s = openSession(tmp);
    const m = s.message({ user_id: 'priya', text: 'hi' });
    const tNull = s.turnStart();
    const tEmpty = s.turnStart({ context_message_ids: [] });
    const tSome = s.turnStart({ context_message_ids: [m.id] });
    const aNull = s.action({ turn_id: tNull.turn_id, tool: 'Bash' });
    const aEmpty = s.action({ turn_id: tNull.turn_id, tool: 'Bash', caused_by: [] });
    const aSome = s.action({ turn_id: tNull.turn_id, tool: 'Bash', caused_by: [m.id] });
    const oNull = s.output({ turn_id: tNull.turn_id, text: 'x', caused_by: null });
    const oEmpty = s.output({ turn_id: tNull.turn_id, text: 'x', caused_by: [] });
    s.end();

    const byId = new Map((await readEvents(s.path)).map((e) => [e.id, e]));
    const field = (id: string, name: string) => {
      const rec = byId.get(id)!;
      return {
        raw: rec.raw,
        decoded: (decodeEvent(rec) as unknown as Record<string, unknown>)[name],
      };
    };
    const expectations: [string, string, unknown][] = [
      [tNull.id, 'context_message_ids', null],
      [tEmpty.id, 'context_message_ids', []],
      [tSome.id, 'context_message_ids', [m.id]],
      [aNull.id, 'caused_by', null],
      [aEmpty.id, 'caused_by', []],
      [aSome.id, 'caused_by', [m.id]],
      [oNull.id, 'caused_by', null],
      [oEmpty.id, 'caused_by', []],
    ];
    for (const [id, name, value] of expectations) {
      const f = field(id, name);
      expect(f.decoded, `${id} ${name}`).toEqual(value);
      expect(f.raw).toContain(`"${name}":${JSON.stringify(value)}`);
    }
  });
});

/** Runs the multi-writer child script as its own process; resolves with the writer id it printed. */
function runChild(args: string[], startAt: number): Promise<string> {
  return new Promise((ok, fail) => {
    const p = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], {
      env: { ...process.env, HANSARD_START_AT: String(startAt) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    p.stderr.on('data', (b: Buffer) => {
      err += b.toString();
    });
    p.on('error', fail);
    p.on('close', (code) => (code === 0 ? ok(out.trim()) : fail(new Error(`child exited ${code}: ${err}`))));
  });
}

describe('three writer processes on one session at once', () => {
  it('write whole lines only: every line of every segment is one JSON event and the counts match', async () => {
    const count = 300;
    const dir = join(tmp, newSessionId());
    const startAt = Date.now() + 2500;
    const writers = await Promise.all([
      runChild([dir, 'alpha', String(count)], startAt),
      runChild([dir, 'beta', String(count)], startAt),
      runChild([dir, 'gamma', String(count), '150'], startAt),
    ]);
    for (const w of writers) expect(isId('w', w)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(writers.map((w) => `${w}.jsonl`).sort());

    for (const w of writers) {
      const path = join(dir, `${w}.jsonl`);
      const text = readFileSync(path, 'utf8');
      expect(text.endsWith('\n')).toBe(true);
      const lines = text.slice(0, -1).split('\n');
      expect(lines).toHaveLength(count + 2);
      lines.forEach((line, i) => {
        // One JSON object per line: JSON.parse refuses two objects welded together or a torn one.
        const obj = JSON.parse(line) as Record<string, unknown>;
        expect(typeof obj === 'object' && obj !== null && !Array.isArray(obj)).toBe(true);
        expect(obj.w).toBe(w);
        expect(obj.sid).toBe(basename(dir));
        expect(obj.seq).toBe(i + 1);
      });
      const events = await readEvents(path);
      expect(events).toHaveLength(count + 2);
      expect(events[0]!.type).toBe('writer.start');
      expect(events[0]!.obj.meta).toMatchObject({ host: 'demo-host', pid: 12345 });
      expect(events.at(-1)!.type).toBe('writer.end');
    }
  }, 60_000);
});

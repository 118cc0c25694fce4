import { describe, expect, it } from 'vitest';
import {
  type LineProblem,
  type RawLine,
  type RecordedEvent,
  readSegment,
  type SegmentItem,
  splitLines,
} from '../../lib/log/index.js';

/** The seed's message line (seed 001): a complete, valid event. */
const GOOD =
  '{"v":3,"sid":"s_01KZVVGRNR3D5V708Z4NPGG11H","w":"w_01KZVVGRNRKM87Z6X6TXYQR7EX","seq":2,"id":"m_01KZVVGRNTBMSD610TK2GA9BFS","ts":"2026-08-12T20:44:44.090132Z","mono":0.002062,"type":"message","user_id":"priya","text":"restart the payments worker","client_ts":null,"redacted":[]}';

/** The seed line with another seq. */
const good = (seq: number): string => GOOD.replace('"seq":2', `"seq":${seq}`);

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const view = (l: RawLine) => ({
  text: Buffer.from(l.bytes).toString('utf8'),
  line: l.line,
  offset: l.offset,
  complete: l.complete,
});

async function read(...chunks: (string | Uint8Array)[]): Promise<SegmentItem[]> {
  return collect(readSegment(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c, 'utf8') : c))));
}

const events = (items: SegmentItem[]): RecordedEvent[] =>
  items.flatMap((i) => (i.kind === 'event' ? [i.event] : []));
const problems = (items: SegmentItem[]): LineProblem[] =>
  items.flatMap((i) => (i.kind === 'problem' ? [i.problem] : []));

describe('splitLines', () => {
  // 30 bytes: an object, an empty line, multi-byte UTF-8 (é is 2 bytes, € is 3), a plain line and a last
  // line with no newline.
  const INPUT = Buffer.from('{"a":1}\n\nhé€llo\nxyz\n{"torn"', 'utf8');
  const EXPECTED = [
    { text: '{"a":1}', line: 1, offset: 0, complete: true },
    { text: '', line: 2, offset: 8, complete: true },
    { text: 'hé€llo', line: 3, offset: 9, complete: true },
    { text: 'xyz', line: 4, offset: 19, complete: true },
    { text: '{"torn"', line: 5, offset: 23, complete: false },
  ];

  it('gives each line its bytes, 1-based number and byte offset', async () => {
    expect(INPUT.length).toBe(30);
    expect((await collect(splitLines([INPUT]))).map(view)).toEqual(EXPECTED);
  });

  it('gives the same lines whichever position the input is split at into two chunks', async () => {
    for (let i = 0; i <= INPUT.length; i++) {
      const lines = await collect(splitLines([INPUT.subarray(0, i), INPUT.subarray(i)]));
      expect(lines.map(view), `split at ${i}`).toEqual(EXPECTED);
    }
  });

  it('gives the same lines for every split into three chunks, as plain Uint8Arrays', async () => {
    const plain = new Uint8Array(INPUT);
    for (let i = 0; i <= plain.length; i++) {
      for (let j = i; j <= plain.length; j++) {
        const chunks = [plain.slice(0, i), plain.slice(i, j), plain.slice(j)];
        const lines = await collect(splitLines(chunks));
        expect(lines.map(view), `split at ${i}, ${j}`).toEqual(EXPECTED);
      }
    }
  });

  it('gives the same lines fed one byte at a time, with empty chunks between', async () => {
    const chunks = [...INPUT].flatMap((b) => [Buffer.from([b]), Buffer.alloc(0)]);
    expect((await collect(splitLines(chunks))).map(view)).toEqual(EXPECTED);
  });

  it('reads an async source as well as an array', async () => {
    async function* source() {
      for (let i = 0; i < INPUT.length; i += 4) yield INPUT.subarray(i, i + 4);
    }
    expect((await collect(splitLines(source()))).map(view)).toEqual(EXPECTED);
  });

  it('marks every line complete when the input ends with a newline', async () => {
    const lines = await collect(splitLines([Buffer.from('a\nb\n')]));
    expect(lines.map(view)).toEqual([
      { text: 'a', line: 1, offset: 0, complete: true },
      { text: 'b', line: 2, offset: 2, complete: true },
    ]);
  });

  it('gives nothing for empty input and one empty line for a lone newline', async () => {
    expect(await collect(splitLines([]))).toEqual([]);
    expect(await collect(splitLines([Buffer.alloc(0)]))).toEqual([]);
    expect((await collect(splitLines([Buffer.from('\n')]))).map(view)).toEqual([
      { text: '', line: 1, offset: 0, complete: true },
    ]);
  });
});

describe('readSegment', () => {
  it('reads complete lines as events with their line number, offset and exact text', async () => {
    const items = await read(`${good(1)}\n${good(2)}\n`);
    expect(problems(items)).toEqual([]);
    const evs = events(items);
    expect(evs.map((e) => [e.seq, e.line, e.offset])).toEqual([
      [1, 1, 0],
      [2, 2, good(1).length + 1],
    ]);
    expect(evs[1]!.raw).toBe(good(2));
    expect(evs[1]!.type).toBe('message');
    expect(evs[1]!.tsMicros).toBe(Date.parse('2026-08-12T20:44:44.090Z') * 1000 + 132);
  });

  it('reports a last line without a newline as truncated_line, even when it is a whole event', async () => {
    const items = await read(`${good(1)}\n${good(2)}`);
    expect(events(items).map((e) => e.seq)).toEqual([1]);
    expect(problems(items)).toMatchObject([
      { code: 'truncated_line', line: 2, offset: good(1).length + 1, complete: false },
    ]);
  });

  it('reports invalid UTF-8 as malformed_line and goes on reading', async () => {
    const bad = Buffer.concat([
      Buffer.from(good(2).replace('restart the payments worker', 'caf'), 'utf8'),
      Buffer.from([0xff, 0xfe]),
    ]);
    const items = await read(`${good(1)}\n`, bad, `\n${good(3)}\n`);
    expect(problems(items)).toHaveLength(1);
    expect(problems(items)[0]).toMatchObject({ code: 'malformed_line', line: 2 });
    expect(problems(items)[0]!.message).toMatch(/UTF-8/);
    expect(events(items).map((e) => e.seq)).toEqual([1, 3]);
  });

  it('reports a torn line in the middle once and reads every line after it', async () => {
    const torn = good(2).slice(0, 60);
    const items = await read(`${good(1)}\n${torn}\n${good(3)}\n${good(4)}\n${good(5)}\n`);
    expect(problems(items)).toHaveLength(1);
    expect(problems(items)[0]).toMatchObject({
      code: 'truncated_line',
      line: 2,
      offset: good(1).length + 1,
      excerpt: torn,
    });
    expect(events(items).map((e) => [e.seq, e.line])).toEqual([
      [1, 1],
      [3, 3],
      [4, 4],
      [5, 5],
    ]);
  });

  it('reports two records welded onto one line as malformed_line', async () => {
    const items = await read(`${good(1)}${good(2)}\n${good(3)}\n`);
    expect(problems(items)).toMatchObject([{ code: 'malformed_line', line: 1 }]);
    expect(events(items).map((e) => e.seq)).toEqual([3]);
  });

  it('reports a line of NUL padding as malformed_line and reads the line after it', async () => {
    const items = await read(`${good(1)}\n`, Buffer.alloc(4096), `\n${good(2)}\n`);
    expect(problems(items)).toMatchObject([{ code: 'malformed_line', line: 2 }]);
    expect(events(items).map((e) => [e.seq, e.line, e.offset])).toEqual([
      [1, 1, 0],
      [2, 3, good(1).length + 1 + 4096 + 1],
    ]);
  });

  it('reports NUL padding in front of a record on the same line as malformed_line', async () => {
    const items = await read(Buffer.alloc(8), `${good(1)}\n`);
    expect(problems(items)).toMatchObject([{ code: 'malformed_line', line: 1 }]);
    expect(events(items)).toEqual([]);
  });

  it.each([
    ['a JSON array', '[1,2,3]'],
    ['an array holding an event', `[${GOOD}]`],
    ['a JSON string', '"text"'],
    ['a JSON number', '42'],
    ['JSON null', 'null'],
    ['an empty line', ''],
    ['plain text', 'hello world'],
  ])('reports %s as malformed_line', async (_what, text) => {
    const items = await read(`${text}\n${good(2)}\n`);
    expect(problems(items)).toMatchObject([{ code: 'malformed_line', line: 1, offset: 0 }]);
    expect(problems(items)[0]!.message).toMatch(/line 1/);
    expect(events(items).map((e) => e.seq)).toEqual([2]);
  });

  it.each(['v', 'sid', 'w', 'seq', 'id', 'ts', 'mono', 'type'])(
    'reports a line missing the envelope field "%s" as malformed_line naming it',
    async (field) => {
      const obj = JSON.parse(GOOD) as Record<string, unknown>;
      delete obj[field];
      const items = await read(`${JSON.stringify(obj)}\n`);
      expect(problems(items)).toMatchObject([{ code: 'malformed_line', line: 1 }]);
      expect(problems(items)[0]!.message).toContain(`"${field}"`);
    },
  );

  it.each([
    ['v', '3'],
    ['seq', 2.5],
    ['seq', '2'],
    ['mono', '0.1'],
    ['ts', 1786567484089],
    ['sid', null],
  ])('reports an envelope field %s of the wrong type (%j) as malformed_line', async (field, value) => {
    const obj = JSON.parse(GOOD) as Record<string, unknown>;
    obj[field] = value;
    const items = await read(`${JSON.stringify(obj)}\n`);
    expect(problems(items)).toMatchObject([{ code: 'malformed_line' }]);
  });

  it('reads an unknown type and a ts that is not a timestamp as events, not problems', async () => {
    const unknown = GOOD.replace('"type":"message"', '"type":"future.thing"');
    const badTs = good(3).replace('2026-08-12T20:44:44.090132Z', 'yesterday');
    const items = await read(`${unknown}\n${badTs}\n`);
    expect(problems(items)).toEqual([]);
    expect(events(items).map((e) => [e.type, e.tsMicros])).toEqual([
      ['future.thing', Date.parse('2026-08-12T20:44:44.090Z') * 1000 + 132],
      ['message', null],
    ]);
  });
});

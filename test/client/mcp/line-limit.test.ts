/**
 * The stdio line limit of `hansard mcp serve` in process (issue 24 item 5, lib/client/mcp/line-limit.ts):
 * `TopFields` reads a JSON-RPC line's top-level `id`, `method` and `params.name` as JSON.parse does,
 * however the bytes are cut into chunks and whatever look-alikes the rest of the line holds; `LineLimit`
 * hands on every line that fits exactly as it came, one line a chunk, and reports each longer one with
 * its size; and a `capture_subagent_messages` call within every documented limit fits in one message.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  LineLimit,
  MAX_MESSAGE_BYTES,
  type OversizeLine,
  TopFields,
} from '../../../lib/client/mcp/line-limit.js';
import {
  CaptureSubagentInput,
  MAX_CALL_CHARS,
  MAX_MESSAGE_CHARS,
  MAX_SUBAGENT_MESSAGES,
} from '../../../lib/client/mcp/subagent.js';

/** `bytes` cut at `cuts` (positions, any order, duplicates allowed). */
function chunks(bytes: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(from, c));
    from = c;
  }
  return out;
}

/** A JSON-RPC-like object: the wanted fields (or not) among other keys in any order, look-alikes within. */
const message = fc
  .record(
    {
      id: fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
      method: fc.oneof(fc.string(), fc.constant('tools/call')),
      params: fc
        .record(
          {
            name: fc.string(),
            arguments: fc.jsonValue(),
            id: fc.jsonValue(),
            method: fc.string(),
          },
          { requiredKeys: [] },
        )
        .chain((p) => fc.shuffledSubarray(Object.entries(p), { minLength: Object.keys(p).length })),
      jsonrpc: fc.constant('2.0'),
      other: fc.jsonValue(),
      '"id"': fc.jsonValue(),
    },
    { requiredKeys: [] },
  )
  .chain((m) => fc.shuffledSubarray(Object.entries(m), { minLength: Object.keys(m).length }));

describe('TopFields', () => {
  it('reads the top-level id, method and params.name as JSON.parse does, however the line is cut', () => {
    fc.assert(
      fc.property(message, fc.array(fc.nat()), (entries, cuts) => {
        const obj = Object.fromEntries(
          entries.map(([k, v]) => [k, k === 'params' ? Object.fromEntries(v as [string, unknown][]) : v]),
        );
        const line = Buffer.from(JSON.stringify(obj), 'utf8');
        const scan = new TopFields();
        for (const c of chunks(line, cuts)) scan.feed(c);
        const back = JSON.parse(line.toString('utf8'));
        const name = back.params?.name;
        expect(scan.fields()).toEqual({
          id: back.id ?? null,
          method: back.method ?? null,
          tool: typeof name === 'string' ? name : null,
        });
      }),
      { numRuns: 500 },
    );
  });

  it('takes no id from inside a string, a nested object or an array, nor after a key too long to be one', () => {
    const cases: [string, unknown][] = [
      ['{"method":"ping","params":{"id":5},"x":["id",6]}', null],
      ['{"note":"\\"id\\":7","method":"ping"}', null],
      [`{"${'k'.repeat(200)}":8,"method":"ping"}`, null],
      ['{"id":"a\\"b\\\\","method":"ping"}', 'a"b\\'],
      ['{"id" : -12.5e3 , "method":"ping"}', -12500],
      ['{"id":true,"method":"ping"}', null],
    ];
    for (const [line, id] of cases) {
      const scan = new TopFields();
      scan.feed(Buffer.from(line));
      expect(scan.fields().id, line).toEqual(id);
    }
  });
});

describe('LineLimit', () => {
  it('hands on each line that fits as it came, one a chunk, and reports each longer one with its size', async () => {
    const max = 40;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: 'binary', maxLength: 60 }).filter((s) => !s.includes('\n'))),
        fc.array(fc.nat()),
        async (lines, cuts) => {
          const reported: OversizeLine[] = [];
          const guard = new LineLimit(max, (l) => reported.push(l));
          const out: Buffer[] = [];
          guard.on('data', (b: Buffer) => out.push(b));
          const done = new Promise((r) => guard.on('end', r));
          const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');
          for (const c of chunks(bytes, cuts)) guard.write(c);
          guard.end();
          await done;
          const fits = lines.filter((l) => Buffer.byteLength(l) + 1 <= max);
          expect(out.map((b) => b.toString('utf8'))).toEqual(fits.map((l) => `${l}\n`));
          expect(reported.map((r) => r.bytes)).toEqual(
            lines.filter((l) => Buffer.byteLength(l) + 1 > max).map((l) => Buffer.byteLength(l)),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('passes a line of exactly the limit with its newline, and reports one byte more', async () => {
    const reported: number[] = [];
    const guard = new LineLimit(10, (l) => reported.push(l.bytes));
    const out: string[] = [];
    guard.on('data', (b: Buffer) => out.push(b.toString()));
    guard.end('123456789\n1234567890\n');
    await new Promise((r) => guard.on('end', r));
    expect(out).toEqual(['123456789\n']);
    expect(reported).toEqual([10]);
  });
});

describe('the documented limits of capture_subagent_messages', () => {
  /** The line the SDK's client writes for a tools/call with these arguments (its key order). */
  const line = (args: unknown) =>
    `${JSON.stringify({ method: 'tools/call', params: { name: 'capture_subagent_messages', arguments: args }, jsonrpc: '2.0', id: Number.MAX_SAFE_INTEGER })}\n`;
  // every character escaped by JSON (6 bytes: \u0000): the most bytes a character can take
  const worst = (n: number) => '\u0000'.repeat(n);
  const perMessage = MAX_CALL_CHARS / MAX_SUBAGENT_MESSAGES;
  const messages = Array.from({ length: MAX_SUBAGENT_MESSAGES }, () => ({
    role: 'tool',
    tool: worst(200),
    call_id: worst(200),
    output: worst(perMessage),
    exit_code: -65_535,
    status: 'cancelled',
    ts: '2026-01-01T00:00:00.12345678901234+05:30', // 40 characters
  }));
  const args = {
    messages,
    agent: worst(120),
    subagent_id: worst(200),
    parent_action_id: 'a_01KZVVGRNTBMSD610TK2GA9BFS',
    session_token: worst(200),
  };

  it('a call at every limit, each character at its longest in JSON, fits in one 10 MiB stdio message', () => {
    expect(CaptureSubagentInput.safeParse(args).success).toBe(true);
    const bytes = Buffer.byteLength(line(args), 'utf8');
    expect(bytes).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    console.info(`worst-case capture call: ${bytes} bytes of ${MAX_MESSAGE_BYTES}`);
    expect(MAX_MESSAGE_CHARS).toBeLessThanOrEqual(MAX_CALL_CHARS);
  });

  it('one character more in a call is refused by name, wherever it is', () => {
    const over = structuredClone(args);
    over.messages[7]!.output += 'x';
    const r = CaptureSubagentInput.safeParse(over);
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toContain(
      'at most 1,000,000 characters of text, output and input a call',
    );
    const input = structuredClone(args);
    (input.messages[0] as Record<string, unknown>).input = { s: 'x' };
    expect(CaptureSubagentInput.safeParse(input).success).toBe(false);
    const ts = structuredClone(args);
    ts.messages[0]!.ts = `2026-01-01T00:00:00.${'1'.repeat(100)}Z`;
    expect(CaptureSubagentInput.safeParse(ts).error?.issues[0]?.message).toBe(
      'a time is at most 40 characters',
    );
  });
});

/**
 * Declared rows put into the text replay by time (lib/service/status/declared.ts): before the first line that is
 * later than the report, whatever the chunking; the rest at the end; lines without a timestamp left where
 * they are.
 */
import { describe, expect, it } from 'vitest';
import { type DeclaredRow, interleaveDeclared } from '../../../lib/service/status/declared.js';

const ts = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, '0')}.000000Z`;
const micros = (s: number) => Date.UTC(2026, 0, 1, 0, 0, s) * 1000;
const line = (s: number) => `${ts(s)}  agent  note  at ${s}\n`;
const row = (s: number): DeclaredRow => ({
  atMicros: micros(s),
  line: `${ts(s)}  declared  status.report  R${s}`,
});

async function collect(chunks: string[], rows: DeclaredRow[]): Promise<string[]> {
  let out = '';
  for await (const c of interleaveDeclared(
    (async function* () {
      yield* chunks;
    })(),
    rows,
  ))
    out += c;
  return out
    .trimEnd()
    .split('\n')
    .map((l) => l.split('  ').at(-1)!);
}

describe('interleaveDeclared', () => {
  it('puts each row after the lines no later than it, across chunk boundaries', async () => {
    const chunks = [line(1) + line(3), line(5), `${line(7)}not a timestamp line\n${line(9)}`];
    expect(await collect(chunks, [row(0), row(3), row(6), row(8), row(20)])).toEqual([
      'R0',
      'at 1',
      'at 3',
      'R3',
      'at 5',
      'R6',
      'at 7',
      'not a timestamp line',
      'R8',
      'at 9',
      'R20',
    ]);
  });

  it('passes chunks through untouched when there are no rows', async () => {
    const chunks = [line(1), line(2)];
    let out = '';
    for await (const c of interleaveDeclared(
      (async function* () {
        yield* chunks;
      })(),
      [],
    ))
      out += c;
    expect(out).toBe(chunks.join(''));
  });
});

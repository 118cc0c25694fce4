/**
 * Shared by the scanLine differential tests (test/log/envelope-scan*.test.ts): what parseLine says of a
 * line, what scanLine says of it, and generators of valid event lines of every type.
 */
import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { expect } from 'vitest';
import { parseLine, serializeEvent } from '../../lib/log/format/codec.js';
import { newLineScan, scanLine } from '../../lib/log/format/envelope-scan.js';
import { FIELD_ORDER, KNOWN_TYPES, type KnownType, type LogEvent } from '../../lib/log/format/events.js';
import { formatTs } from '../../lib/log/format/time.js';

export interface Verdict {
  ok: boolean;
  tsMicros: number;
  isCorrection: boolean;
  id: string | undefined;
}

/** parseLine's verdict in scanLine's terms (the contract of lib/log/format/envelope-scan.ts). */
export function reference(bytes: Uint8Array, wantId: boolean): Verdict {
  const p = parseLine(bytes, 1, 0, true);
  if (!p.ok) return { ok: false, tsMicros: Number.NaN, isCorrection: false, id: undefined };
  return {
    ok: true,
    tsMicros: p.event.tsMicros ?? Number.NaN,
    isCorrection: p.event.type === 'correction',
    id: wantId ? p.event.id : undefined,
  };
}

const out = newLineScan();
/** Filler around the line: bytes that would complete a torn line if the scan read past its end. */
const AROUND = Buffer.from('"}]0123456789e"}\n{"v":3}');

/**
 * Asserts scanLine agrees with parseLine on `bytes`, with and without the id, the line placed at an offset
 * inside a larger buffer (a Buffer or a plain Uint8Array) so that a read past `end` would show; valid UTF-8
 * is scanned both as checked and unchecked, invalid only unchecked (the caller's contract).
 */
export function expectAgrees(bytes: Uint8Array, label = ''): void {
  const valid = isUtf8(bytes);
  for (const wantId of [false, true]) {
    const want = reference(bytes, wantId);
    for (const checked of valid ? [true, false] : [false]) {
      for (const plain of [false, true]) {
        const pre = AROUND.subarray(0, (bytes.length % 7) + 1);
        const whole = plain
          ? new Uint8Array(pre.length + bytes.length + AROUND.length)
          : Buffer.alloc(pre.length + bytes.length + AROUND.length);
        whole.set(pre, 0);
        whole.set(bytes, pre.length);
        whole.set(AROUND, pre.length + bytes.length);
        const ok = scanLine(whole, pre.length, pre.length + bytes.length, out, wantId, checked);
        const got: Verdict = { ok, tsMicros: out.tsMicros, isCorrection: out.isCorrection, id: out.id };
        // vitest's expect costs tens of µs: compare first, let it describe a difference.
        const same =
          got.ok === want.ok &&
          Object.is(got.tsMicros, want.tsMicros) &&
          got.isCorrection === want.isCorrection &&
          got.id === want.id;
        if (!same)
          expect(
            got,
            `${label} ${JSON.stringify(Buffer.from(bytes).toString('latin1'))} wantId=${wantId} checked=${checked}`,
          ).toStrictEqual(want);
      }
    }
  }
}

const ULID = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ulid = fc.string({ unit: fc.constantFrom(...ULID.split('')), minLength: 26, maxLength: 26 });
const prefixed = (p: string) => ulid.map((u) => `${p}_${u}`);

/** `ts` values: mostly the writers' form, also every other form parseTs reads or refuses. */
export const tsArb = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }).map(formatTs),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 0, max: 13 }),
        fc.integer({ min: 0, max: 32 }),
        fc.integer({ min: 0, max: 24 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 61 }),
        fc.constantFrom('', '.1', '.123456', '.123456789', '.1234567'),
        fc.constantFrom('Z', 'z', '', '+02:00', '-0530', '+00:00', ' Z'),
        fc.constantFrom('T', 't', ' ', 'X'),
      )
      .map(([y, mo, d, h, mi, s, frac, zone, sep]) => {
        const p = (n: number, w = 2) => String(n).padStart(w, '0');
        return `${p(y, 4)}-${p(mo)}-${p(d)}${sep}${p(h)}:${p(mi)}:${p(s)}${frac}${zone}`;
      }),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
);

const fieldValue = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }),
  fc.array(prefixed('m'), { maxLength: 3 }),
);

/** A valid event line of any known type (or an unknown one) as `serializeEvent` writes it. */
export const eventLine = fc
  .record({
    sid: prefixed('s'),
    w: prefixed('w'),
    seq: fc.oneof(fc.integer({ min: 1, max: 1_000_000 }), fc.maxSafeInteger()),
    id: fc.oneof(
      { weight: 5, arbitrary: prefixed('e') },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
    ),
    ts: tsArb,
    mono: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.nat()),
    type: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...KNOWN_TYPES) },
      { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
    ),
    fields: fc.array(fieldValue, { minLength: 7, maxLength: 7 }),
    extra: fc.dictionary(fc.string({ unit: 'binary', maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), {
      maxKeys: 3,
    }),
  })
  .map(({ fields, extra, type, ...env }) => {
    const ev: Record<string, unknown> = { v: 3, ...env, type, extra };
    const known = (KNOWN_TYPES as string[]).includes(type);
    if (known)
      FIELD_ORDER[type as KnownType].forEach((f, k) => {
        ev[f] = fields[k];
      });
    else ev.unknown = true;
    return serializeEvent(ev as unknown as LogEvent);
  });

/**
 * The envelope's keys as the byte scanners read them (lib/log/format/envelope-scan.ts for the replay,
 * lib/log/format/ingest-scan.ts for ingest): which envelope key a top-level key's bytes name, and the kinds of
 * value a scan tells apart. One copy for both, so that they decide a line the same way.
 */

// What a top-level value was, for the envelope keys (the last occurrence of a key overwrites, as in JSON.parse).
export const MISSING = 0;
export const STR = 1; // a string without escapes: its bytes are its UTF-8 text
export const STR_ESC = 2; // a string with an escape: its text needs decoding
export const INT = 3; // plain digits (json-scan's plainInteger), at most 15: an integer for sure
export const NUM = 4; // any other number literal: Number.isInteger needs the parse
export const OTHER = 5; // object, array, true, false, null

/** Which envelope key the unescaped key `buf[at, at+len)` is: 1 v, 2 sid, 3 w, 4 seq, 5 id, 6 ts, 7 mono, 8 type; 0 none. */
export function envelopeKey(buf: Uint8Array, at: number, len: number): number {
  const a = buf[at];
  switch (len) {
    case 1:
      return a === 0x76 ? 1 : a === 0x77 ? 3 : 0; // v w
    case 2:
      if (a === 0x69) return buf[at + 1] === 0x64 ? 5 : 0; // id
      if (a === 0x74) return buf[at + 1] === 0x73 ? 6 : 0; // ts
      return 0;
    case 3:
      if (a !== 0x73) return 0;
      if (buf[at + 1] === 0x69) return buf[at + 2] === 0x64 ? 2 : 0; // sid
      if (buf[at + 1] === 0x65) return buf[at + 2] === 0x71 ? 4 : 0; // seq
      return 0;
    case 4:
      if (a === 0x6d) return buf[at + 1] === 0x6f && buf[at + 2] === 0x6e && buf[at + 3] === 0x6f ? 7 : 0; // mono
      if (a === 0x74) return buf[at + 1] === 0x79 && buf[at + 2] === 0x70 && buf[at + 3] === 0x65 ? 8 : 0; // type
      return 0;
    default:
      return 0;
  }
}

/**
 * `envelopeKey` of a key written with escapes (`"\u0076"` is `v`), decoded without a string: the key
 * `buf[at, end)` is known to be a valid JSON string body.
 */
export function escapedEnvelopeKey(buf: Uint8Array, at: number, end: number): number {
  let units = 0;
  let i = at;
  // At most 4 UTF-16 units, each ASCII, packed into one number (each as 1 + its code, so a NUL is not nothing): the envelope names are 1 to 4 of them.
  let packed = 0;
  while (i < end) {
    let u = buf[i]!;
    if (u === 0x5c) {
      const e = buf[i + 1]!;
      if (e === 0x75) {
        u =
          (hexValue(buf[i + 2]!) << 12) |
          (hexValue(buf[i + 3]!) << 8) |
          (hexValue(buf[i + 4]!) << 4) |
          hexValue(buf[i + 5]!);
        i += 6;
      } else {
        u = e === 0x62 ? 8 : e === 0x66 ? 12 : e === 0x6e ? 10 : e === 0x72 ? 13 : e === 0x74 ? 9 : e;
        i += 2;
      }
    } else i++;
    if (u >= 0x80 || ++units > 4) return 0;
    packed = packed * 256 + u + 1;
  }
  for (let k = 0; k < ENVELOPE_PACKED.length; k++) if (ENVELOPE_PACKED[k] === packed) return k + 1;
  return 0;
}

function hexValue(c: number): number {
  return c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57;
}

/** The envelope names in `envelopeKey`'s numbering, packed as `escapedEnvelopeKey` packs a key. */
const ENVELOPE_PACKED = ['v', 'sid', 'w', 'seq', 'id', 'ts', 'mono', 'type'].map((name) => {
  let packed = 0;
  for (const ch of name) packed = packed * 256 + ch.charCodeAt(0) + 1;
  return packed;
});

/**
 * Export bundles built from scratch for the offline verifier's suites (issue 15.3), with no server:
 * segments of a few writers cut into line-aligned chunks, digests chained and signed with a generated
 * Ed25519 key via signDigest, packed with packBundle. `chunks` says where each chunk is (writer, offset,
 * 1-based line, digest seq), so a tamper test can name exactly what the verifier must report.
 */
import { createHash, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { type BundleParts, packBundle } from '../../lib/audit/bundle.js';
import { canonicalJson, digestHash, GENESIS_CHAIN, keyIdOf, nextChain } from '../../lib/audit/chain.js';
import {
  DIGEST_FORMAT,
  type DigestRecord,
  type PublicKeyInfo,
  type SignedDigest,
} from '../../lib/audit/schemas.js';
import { signDigest } from '../../lib/audit/signature.js';

export interface TestKey {
  info: PublicKeyInfo;
  privateKey: KeyObject;
  signing: { key_id: string; sign(m: Uint8Array): Promise<Uint8Array> };
}

/** A fresh Ed25519 key as the deployment would hold it. */
export function makeKey(created_at = '2026-11-30T09:00:00.000Z'): TestKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const key_id = keyIdOf(pem);
  return {
    info: { key_id, algorithm: 'ed25519', public_key: pem, created_at, retired_at: null },
    privateKey,
    signing: { key_id, sign: async (m) => new Uint8Array(sign(null, m, privateKey)) },
  };
}

export interface TestChunk {
  w: string;
  offset: number;
  length: number;
  /** 1-based line of the segment where the chunk starts */
  line: number;
  seq: number;
  sha256: string;
}

export interface TestSession {
  tenant: string;
  sid: string;
  key: TestKey;
  /** writer id → segment bytes */
  segments: Map<string, Buffer>;
  chunks: TestChunk[];
  digests: SignedDigest[];
  exported_at: string;
}

export const T0 = Date.parse('2026-11-30T10:00:00.000Z');
const MIN = 60_000;
export const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A session of `writers` writers, each `chunksPerWriter` chunks of 1..4 lines, attested by `digestCount`
 * digests written 5 minutes apart (each due again within an hour), the last one the export's.
 * Chunk c of every writer goes to digest floor(c * (digestCount - 1) / chunksPerWriter) + 1, so the
 * last digest lists no chunk when digestCount > 1 (written when nothing changed, like CloudTrail).
 */
export async function buildSession(
  opts: {
    writers?: number;
    chunksPerWriter?: number;
    digestCount?: number;
    key?: TestKey;
    /** a writer every digest lists with no bytes (exported as an empty segment) */
    emptyWriter?: boolean;
  } = {},
): Promise<TestSession> {
  const nw = opts.writers ?? 2;
  const per = opts.chunksPerWriter ?? 6;
  const nd = opts.digestCount ?? 4;
  const key = opts.key ?? makeKey();
  const tenant = 't_acme';
  const sid = 's_01KAUDITTESTSESSION0000000';
  const segments = new Map<string, Buffer>();
  const chunks: TestChunk[] = [];
  for (let wi = 0; wi < nw; wi++) {
    const w = `w_01KAUDITWRITER${String(wi).padStart(11, '0')}`;
    const parts: Buffer[] = [];
    let offset = 0;
    let line = 1;
    for (let c = 0; c < per; c++) {
      const nLines = 1 + ((c * 7 + wi) % 4);
      let text = '';
      for (let l = 0; l < nLines; l++) {
        text += `${JSON.stringify({ v: 3, w, n: line + l, text: `writer ${wi} chunk ${c} line ${l} ${'x'.repeat((c * 13 + l * 5) % 40)}` })}\n`;
      }
      const b = Buffer.from(text);
      const seq = nd === 1 ? 1 : Math.floor((c * (nd - 1)) / per) + 1;
      chunks.push({ w, offset, length: b.length, line, seq, sha256: sha256(b) });
      parts.push(b);
      offset += b.length;
      line += nLines;
    }
    segments.set(w, Buffer.concat(parts));
  }
  if (opts.emptyWriter) segments.set('w_01KAUDITWRITERZZEMPTY00000', Buffer.alloc(0));
  const digests: SignedDigest[] = [];
  const state = new Map([...segments.keys()].map((w) => [w, { length: 0, lines: 0, chain: GENESIS_CHAIN }]));
  for (let seq = 1; seq <= nd; seq++) {
    const mine = chunks.filter((c) => c.seq === seq);
    for (const c of mine) {
      const st = state.get(c.w)!;
      st.chain = nextChain(st.chain, c.offset, c.length, c.sha256);
      st.length += c.length;
      st.lines +=
        segments
          .get(c.w)!
          .subarray(c.offset, c.offset + c.length)
          .toString()
          .split('\n').length - 1;
    }
    const at = T0 + (seq - 1) * 5 * MIN;
    const prev = digests.at(-1);
    const record: DigestRecord = {
      format: DIGEST_FORMAT,
      tenant,
      sid,
      seq,
      at: iso(at),
      reason: seq === nd ? 'export' : 'scheduled',
      next_due: iso(at + 60 * MIN),
      previous: prev ? { seq: prev.seq, sha256: digestHash(prev), signature: prev.signature } : null,
      chunks: mine.map(({ w, offset, length, sha256 }) => ({ w, offset, length, sha256 })),
      writers: [...state].map(([w, st]) => ({
        w,
        length: st.length,
        lines: st.lines,
        chain: st.chain,
        ended: false,
      })),
      key_id: key.info.key_id,
      algorithm: 'ed25519',
    };
    digests.push(await signDigest(record, key.signing));
  }
  return { tenant, sid, key, segments, chunks, digests, exported_at: digests.at(-1)!.at };
}

/** The packBundle parts of a session; `head` defaults to the newest digest given. */
export function partsOf(
  s: TestSession,
  over: {
    digests?: Array<SignedDigest | { seq: number; bytes: Uint8Array }>;
    keys?: PublicKeyInfo[];
    head?: SignedDigest;
    segments?: Map<string, Buffer>;
    exported_at?: string;
  } = {},
): BundleParts {
  const digests = over.digests ?? s.digests;
  const head = over.head ?? s.digests.at(-1)!;
  return {
    tenant: s.tenant,
    sid: s.sid,
    exported_at: over.exported_at ?? s.exported_at,
    head: { seq: head.seq, sha256: digestHash(head) },
    digests: digests.map((d) => ('bytes' in d ? d : { seq: d.seq, bytes: Buffer.from(canonicalJson(d)) })),
    keys: over.keys ?? [s.key.info],
    segments: [...(over.segments ?? s.segments)].map(([w, b]) => ({
      w,
      length: b.length,
      read: async function* () {
        yield b;
      },
    })),
  };
}

/** Packs `parts` into `path` (gzip-compressed when `gzip`). */
export async function writeBundle(parts: BundleParts, path: string, gzip = false): Promise<string> {
  const out = createWriteStream(path);
  if (gzip) await pipeline(packBundle(parts), createGzip(), out);
  else await pipeline(packBundle(parts), out);
  return path;
}

export function sha256(b: Uint8Array): string {
  return createHash('sha256').update(b).digest('hex');
}

/**
 * What a tenant stores on a test server, written and watched through the API and the disk: posting a
 * chunk, uploading a whole segment, the digest of the segment files, the file of one segment, and the
 * checks that a refused request changed nothing (DESIGN §5: a refusal stores nothing).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect } from 'vitest';
import { type Answer, type ErrorObject, expectError, request } from './http.js';
import type { LocalSegment } from './segments.js';

/** The part of a test server these helpers use: its address and its data directory. */
export interface ServerFiles {
  url: string;
  dataDir: string;
}

/** `POST …/chunks?offset=N` with `body` (no `?offset` when `offset` is null). */
export function postChunk(
  srv: { url: string },
  token: string | null,
  sid: string,
  w: string,
  offset: number | null,
  body: Uint8Array | string,
): Promise<Answer> {
  const q = offset === null ? '' : `?offset=${offset}`;
  return request(srv, 'POST', `/v1/sessions/${sid}/writers/${w}/chunks${q}`, { token, body });
}

/** Uploads a whole local segment as one chunk at offset 0 and expects 201. */
export async function upload(srv: { url: string }, token: string, seg: LocalSegment): Promise<Answer> {
  const a = await postChunk(srv, token, seg.sid, seg.w, 0, seg.bytes);
  expect(a.status, a.text).toBe(201);
  return a;
}

/** sha256 over every file under `<data>/tenants` (sorted relative paths, each path then its bytes). */
export function tenantsDigest(srv: { dataDir: string }): string {
  const root = join(srv.dataDir, 'tenants');
  const files: string[] = [];
  const walk = (dir: string) => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of entries) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else files.push(p);
    }
  };
  walk(root);
  files.sort();
  const h = createHash('sha256');
  for (const f of files) {
    h.update(`${relative(root, f)}\0`);
    h.update(readFileSync(f));
    h.update('\0');
  }
  return h.digest('hex');
}

/** The on-disk file of a stored segment (the local segment store's layout). */
export function storedSegmentPath(srv: { dataDir: string }, tenant: string, sid: string, w: string): string {
  return join(srv.dataDir, 'tenants', tenant, 'sessions', sid, `${w}.jsonl`);
}

/**
 * Runs a request that must be refused and checks that nothing changed: the bytes under `<data>/tenants`
 * and the writer's index entry (`GET …/writers/{w}`: status and body) are the same before and after.
 */
export async function expectRefusedUnchanged(
  srv: ServerFiles,
  probe: { token: string; sid: string; w: string },
  send: () => Promise<Answer>,
  status: number,
  code?: string,
): Promise<ErrorObject> {
  const writerPath = `/v1/sessions/${probe.sid}/writers/${probe.w}`;
  const digestBefore = tenantsDigest(srv);
  const writerBefore = await request(srv, 'GET', writerPath, { token: probe.token });
  const err = expectError(srv, await send(), status, code);
  expect(tenantsDigest(srv)).toBe(digestBefore);
  const writerAfter = await request(srv, 'GET', writerPath, { token: probe.token });
  expect(writerAfter.status).toBe(writerBefore.status);
  expect(writerAfter.text).toBe(writerBefore.text);
  return err;
}

/**
 * What a tenant stores, as far as the API and the disk show it: the segment files' digest, and the
 * answers (status and body) of a few reads of one session and writer through `token`, and its tokens.
 */
export async function snapshot(
  srv: ServerFiles,
  token: string,
  probe: { sid: string; w: string },
): Promise<string[]> {
  const reads = [
    `/v1/sessions/${probe.sid}/writers/${probe.w}`,
    `/v1/sessions/${probe.sid}/status`,
    '/v1/sessions?limit=200',
  ];
  const out = [tenantsDigest(srv)];
  for (const path of reads) {
    const a = await request(srv, 'GET', path, { token });
    out.push(`${a.status} ${a.text}`);
  }
  const tokens = await request(srv, 'GET', '/v1/tokens', { token });
  const ids = (tokens.json?.tokens ?? []).map((t: { id: string; revoked_at: unknown }) => [
    t.id,
    t.revoked_at,
  ]);
  out.push(JSON.stringify(ids));
  return out;
}

/** Waits `ms` milliseconds (so index timestamps differ). */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

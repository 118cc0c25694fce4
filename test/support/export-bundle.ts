/**
 * Export bundles (`GET /v1/sessions/{sid}/export`, a tar of the session's segments, digests and manifest)
 * for the tests that take one apart: a signing server with a reader token (`useSigningServer`), a
 * generated session uploaded to it (`uploadGenerated`), the export's bytes (`fetchExport`) and its
 * entries (`untar`, or written to a directory: `untarTo`).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { expect } from 'vitest';
import { generateSession } from '../../bench/gen.js';
import { LocalKeyring } from '../../lib/audit/local-keyring.js';
import { listSegments } from '../../lib/log/index.js';
import { request } from './http.js';
import { type SuiteServer, useServer } from './server.js';

/** The entries of a tar, by name, in the tar's order. */
export async function untar(bytes: Uint8Array): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const extract = tar.extract();
  Readable.from([Buffer.from(bytes)]).pipe(extract as never);
  for await (const entry of extract) {
    const parts: Buffer[] = [];
    for await (const b of entry) parts.push(b as Buffer);
    out.set(entry.header.name, Buffer.concat(parts));
  }
  return out;
}

/**
 * Writes each entry of a tar under `dir` (folders made as needed), through `edit` when given (an attack
 * that changes a file of the bundle before it is verified).
 */
export async function untarTo(
  bytes: Uint8Array,
  dir: string,
  edit: (name: string, body: Buffer) => Buffer = (_, body) => body,
): Promise<void> {
  for (const [name, body] of await untar(bytes)) {
    const target = join(dir, name);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, edit(name, body));
  }
}

/**
 * `useServer` with a local keyring as its signer (in a fresh temp folder named `<prefix>…`) and a token
 * `reader` with scope `read`; the keyring's folder is `keyDir`.
 */
export function useSigningServer(prefix = 'hansard-signing-keys-') {
  const keyDir = mkdtempSync(join(tmpdir(), prefix));
  const { keyring } = LocalKeyring.open(keyDir);
  const srv = useServer({ tokens: { reader: ['read'] }, deps: { signer: keyring } });
  return { srv, keyring, keyDir };
}

/**
 * Generates a session of `lines` lines over `writers` writers (bench/gen.ts) in `srv.workDir` and uploads
 * each writer's segment whole as tenant admin; resolves with its id and local directory.
 */
export async function uploadGenerated<T extends string, K extends string>(
  srv: SuiteServer<T, K>,
  lines: number,
  writers: number,
): Promise<{ sid: string; dir: string }> {
  const dir = await generateSession(srv.workDir, lines, writers);
  const sid = dir.split('/').pop()!;
  for (const { w, path } of listSegments(dir)) {
    const a = await request(srv, 'POST', `/v1/sessions/${sid}/writers/${w}/chunks?offset=0`, {
      token: srv.tenant.admin,
      body: readFileSync(path),
    });
    expect(a.status, a.text).toBe(201);
  }
  return { sid, dir };
}

/** The export of session `sid` read with `token`, which must answer 200. */
export async function fetchExport(srv: { url: string }, sid: string, token: string): Promise<Buffer> {
  const res = await fetch(`${srv.url}/v1/sessions/${sid}/export`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/**
 * docs/api.md and docs/audit.md against what the server serves (issue 15): every operation of the served
 * OpenAPI document has a row in api.md's route table (`GET /v1/keys` had none), `?head=N` has its own row,
 * the replay URL's export limit is the same 200 MB in both docs and the document, and audit.md's
 * three-command example passes `--at` the time recorded at export (not the time of verifying) and
 * `--url` to the export when step 1 names a remote server, and its verify passes `--tenant` with `--sid`
 * (issue 15 attack 2: `--sid` alone is refused).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({});
const apiMd = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
const auditMd = readFileSync(new URL('../../docs/audit.md', import.meta.url), 'utf8');

/** The first cells of api.md's route table, each `METHOD path` of a code span (`a\|b` alternatives and `GET/POST` expanded). */
function routeRows(): string[] {
  const rows: string[] = [];
  for (const line of apiMd.split('\n')) {
    const cell = /^\| (`[^|]*?(?:\\\|[^|]*?)*`(?:, `[^`]*`)*) \|/.exec(line)?.[1];
    if (!cell) continue;
    for (const span of cell.matchAll(/`([^`]+)`/g)) {
      const [first, ...alts] = span[1]!.split('\\|');
      // `GET/POST /login`: one row per method
      const methods = /^([A-Z]+(?:\/[A-Z]+)+) (.*)$/.exec(first!);
      if (methods) for (const m of methods[1]!.split('/')) rows.push(`${m} ${methods[2]}`);
      rows.push(first!);
      const base = first!.slice(0, first!.lastIndexOf('/') + 1);
      for (const alt of alts) rows.push(`${base}${alt}`);
    }
  }
  return rows;
}

describe('docs/api.md', () => {
  it('has a row for every operation of GET /v1/openapi.json', async () => {
    const doc = (await request(srv, { method: 'GET', path: '/v1/openapi.json' })).json as {
      paths: Record<string, Record<string, unknown>>;
    };
    const rows = routeRows();
    const missing = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops)
        .map((m) => `${m.toUpperCase()} ${path}`)
        .filter((op) => !rows.some((r) => r === op || r.startsWith(`${op}?`))),
    );
    expect(missing).toEqual([]);
    expect(rows).toContain('GET /v1/sessions/{sid}/export?head=N');
    expect(rows).toContain('POST /v1/sessions/{sid}/digests');
  });

  it('says the replay URL streams an export up to 200 MB, as docs/audit.md and the document do', async () => {
    const doc = (await request(srv, { method: 'GET', path: '/v1/openapi.json' })).json as {
      paths: Record<string, { get: { description: string } }>;
    };
    const exportDoc = doc.paths['/v1/sessions/{sid}/export']!.get.description;
    for (const [name, text] of [
      ['docs/api.md', apiMd],
      ['docs/audit.md', auditMd],
      ['the export operation', exportDoc],
    ]) {
      expect(text, name).not.toMatch(/bundles? of any size|any size up to/);
      expect(text, name).toMatch(/200 MB/);
    }
  });
});

describe('docs/audit.md, the three commands', () => {
  const block =
    /## How an auditor checks a bundle in three commands\s+```sh\n([\s\S]*?)```/.exec(auditMd)?.[1] ?? '';
  const lines = block.split('\n').filter((l) => l.trim() !== '');
  const exportLine = lines.find((l) => l.startsWith('hansard export')) ?? '';
  const verifyLine = lines.find((l) => l.startsWith('hansard verify')) ?? '';

  it('--at is the time recorded before the export, not computed when verifying', () => {
    expect(verifyLine).toMatch(/--at /);
    expect(verifyLine).not.toMatch(/\$\(date/);
    const recorded = lines.findIndex((l) => /date -u/.test(l));
    expect(recorded).toBeGreaterThanOrEqual(0);
    expect(recorded).toBeLessThan(lines.indexOf(exportLine));
  });

  it('the verify names the session by tenant and sid: --sid alone is refused (sids are per tenant)', () => {
    expect(verifyLine).toMatch(/ --tenant \S+ --sid s_/);
    // the Verify paragraph says --sid needs --tenant
    expect(auditMd).toMatch(/`--sid` needs `--tenant`/);
    expect(auditMd).not.toMatch(/Add `--sid s_[^`]*` \(and `--tenant T`\)/);
  });

  it('the export names the server step 1 fetched the keys from', () => {
    const server = /curl -s (https?:\/\/[^/\s]+)\/v1\/keys/.exec(block)?.[1];
    expect(server).toBeDefined();
    expect(exportLine).toContain(`--url ${server}`);
  });
});

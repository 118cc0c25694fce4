/**
 * `hansard verify --codes` lists every code a user can see: the session log's and the export bundle's
 * (`verify --digests`, AUDIT_FINDING_CODES), in two sections and in --json; docs/audit.md's findings
 * table names every bundle code. Both lists derive from the code that reports them.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AUDIT_FINDING_CODES } from '../../../lib/audit/schemas.js';
import { VERIFY_CODE_INFO } from '../../../lib/log/analyse/verify-codes.js';
import { runHansard } from '../../support/cli.js';

const bundleCodes = Object.keys(AUDIT_FINDING_CODES);
const run = (args: string[]) => runHansard(args, { cwd: process.cwd() });

describe('hansard verify --codes: the bundle codes too', () => {
  it('prints two sections, the second every AUDIT_FINDING_CODES key with its severity', async () => {
    const r = await run(['verify', '--codes']);
    expect(r.code).toBe(0);
    const [log, bundle] = r.out.trimEnd().split('\n\n');
    expect(log!.split('\n')[0]).toBe('A session log (hansard verify SID|DIR):');
    expect(log!.split('\n')).toHaveLength(Object.keys(VERIFY_CODE_INFO).length + 1);
    const lines = bundle!.split('\n');
    expect(lines[0]).toBe('An export bundle (hansard verify --digests BUNDLE):');
    expect(lines.slice(1).map((l) => l.split(/\s+/)[1])).toEqual(bundleCodes);
    expect(lines).toContain(
      "error    digest_chain_broken         a digest's previous does not match the digest before it",
    );
    expect(lines).toContain(
      'warning  keys_from_bundle            the keys were taken from the bundle itself; pass --public-key with a key you trust',
    );
    expect(r.out).not.toContain('`');
  });

  it('--json: {log, bundle}, each code to {severity, meaning}', async () => {
    const j = JSON.parse((await run(['verify', '--codes', '--json'])).out);
    expect(j.log).toEqual(VERIFY_CODE_INFO);
    expect(Object.keys(j.bundle)).toEqual(bundleCodes);
    expect(j.bundle.digest_late.severity).toBe('warning');
    expect(j.bundle.chunk_modified).toEqual({
      severity: 'error',
      meaning:
        'bytes of an attested chunk differ from its SHA-256 (the message names the lines of the chunk and any change of length)',
    });
  });

  it("docs/audit.md's findings table names every bundle code, with its severity", () => {
    const md = readFileSync(new URL('../../../docs/audit.md', import.meta.url), 'utf8');
    const table = md.slice(md.indexOf('### What verify reports'));
    const rows = new Map<string, string>();
    for (const line of table.split('\n')) {
      const m = /^\| ((?:`[a-z_]+`(?:, )?)+) \| (error|warning) \|/.exec(line);
      if (m) for (const c of m[1]!.matchAll(/`([a-z_]+)`/g)) rows.set(c[1]!, m[2]!);
    }
    for (const code of bundleCodes)
      expect(rows.get(code), code).toBe(
        AUDIT_FINDING_CODES[code as keyof typeof AUDIT_FINDING_CODES].split(':')[0],
      );
  });
});

/**
 * `hansard verify --digests` extraction limits (lib/audit/bundle-extract.ts): a .tar.gz past 100× its
 * size (at least 16 MiB) is refused with exit 2 naming how to raise it; --max-bytes and
 * HANSARD_VERIFY_MAX_BYTES raise or lower the cap; --max-entries caps entries; a real bundle as .tar.gz
 * passes under the defaults. Real bundles and real gzip, the CLI in process.
 */
import { createWriteStream, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSession, partsOf, writeBundle } from '../support/audit-bundle.js';
import { runHansard } from '../support/cli.js';
import { tmpDirs } from '../support/tmp.js';

const tmp = tmpDirs('hansard-extract-limits-');
let dir: string;
let bomb: string;
let real: string;
let pem: string;

beforeAll(async () => {
  dir = tmp.make();
  // 32 MiB of zeros: about 32 KB gzipped, so past the 16 MiB floor of the ratio cap
  bomb = join(dir, 'bomb.tar.gz');
  const pack = tar.pack();
  const write = pipeline(pack, createGzip({ level: 9 }), createWriteStream(bomb));
  pack.entry({ name: 's_x/manifest.json' }, '{}');
  pack.entry({ name: 's_x/segments/w_x.jsonl' }, Buffer.alloc(32 * 1024 * 1024));
  pack.finalize();
  await write;
  const s = await buildSession();
  real = await writeBundle(partsOf(s), join(dir, 'real.tar.gz'), true);
  pem = join(dir, 'key.pem');
  writeFileSync(pem, s.key.info.public_key);
});

const verify = (args: string[], env: Record<string, string> = {}) =>
  runHansard(['verify', '--digests', ...args], { cwd: dir, env });

describe('verify --digests extraction limits', () => {
  it('refuses a .tar.gz past 100× its size (exit 2), saying which limit and how to raise it', async () => {
    expect(statSync(bomb).size).toBeLessThan(200_000);
    const r = await verify([bomb]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('extracts to more than 16777216 bytes (100× its');
    expect(r.err).toContain('--max-bytes');
    expect(r.err).toContain('HANSARD_VERIFY_MAX_BYTES');
    expect(r.out).toBe('');
  });

  it('--max-bytes (or HANSARD_VERIFY_MAX_BYTES) raises it: the bundle is then read and judged', async () => {
    const raised = await verify([bomb, '--max-bytes', '64MiB']);
    expect(raised.code, raised.err).toBe(1);
    expect(raised.out).toMatch(/^NOT verified: /m);
    const byEnv = await verify([bomb], { HANSARD_VERIFY_MAX_BYTES: '64M' });
    expect(byEnv.code, byEnv.err).toBe(1);
  });

  it('a real bundle passes the defaults; a lower --max-bytes or --max-entries refuses it', async () => {
    const ok = await verify([real, '--public-key', pem]);
    expect(ok.code, ok.out + ok.err).toBe(0);
    const low = await verify([real, '--public-key', pem], { HANSARD_VERIFY_MAX_BYTES: '1K' });
    expect(low.code).toBe(2);
    expect(low.err).toContain('the --max-bytes limit of 1024 bytes');
    const few = await verify([real, '--public-key', pem, '--max-entries', '3']);
    expect(few.code).toBe(2);
    expect(few.err).toContain('holds more than 3 entries');
  });

  it('refuses a --max-bytes that is not a size', async () => {
    const r = await verify([real, '--max-bytes', '1.5G']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--max-bytes 1.5G is not a size in bytes');
  });
});

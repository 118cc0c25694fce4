/**
 * scripts/board-demo.ts says how to run it in a way that works from a fresh checkout: `tsx` is a dev
 * dependency, not on PATH, so the usage line and the file's doc say `npx tsx …`.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('scripts/board-demo.ts usage', () => {
  it('prints a usage line that runs as written (npx tsx), exit 2, when called without arguments', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/board-demo.ts'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('usage: npx tsx scripts/board-demo.ts URL ADMIN_TOKEN');
  });

  it('documents the same command at the top of the file', () => {
    const src = readFileSync('scripts/board-demo.ts', 'utf8');
    expect(src).toContain('`npx tsx scripts/board-demo.ts URL ADMIN_TOKEN`');
    expect(src).not.toMatch(/[^x] tsx scripts\/board-demo/);
  });
});

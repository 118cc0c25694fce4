/**
 * `--help` texts and messages name the doc a reader can open (docs/work.md, docs/status.md), not the
 * internal spec's seed numbers ("seed 004", "seed 000"), which a newcomer cannot look up.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runHansard } from '../../support/cli.js';

const help = async (args: string[]) => {
  const r = await runHansard([...args, '--help'], {
    cwd: mkdtempSync(join(tmpdir(), 'hansard-help-')),
    env: {},
  });
  return r.out + r.err;
};

describe('help texts', () => {
  it('name the docs, not seed numbers', async () => {
    const texts = {
      work: await help(['work']),
      heartbeat: await help(['work', 'heartbeat']),
      report: await help(['session', 'report']),
      top: await help([]),
    };
    for (const [name, t] of Object.entries(texts)) expect(t, name).not.toMatch(/seed \d{3}/);
    expect(texts.work).toContain('docs/work.md');
    expect(texts.top).toContain('docs/work.md');
    expect(texts.report).toContain('docs/status.md');
  });
});

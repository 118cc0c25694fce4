/**
 * `hansard keys list|rotate --data DIR` refuses (exit 2) a folder that is not a hansard data directory
 * (no state.sqlite): a typo must neither make a keys/ folder and a key nobody signs with, nor answer "no
 * signing key yet" as if the folder were a deployment. A real data directory (made by a real serve start)
 * still works.
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../../lib/deploy/local-serve.js';
import { runHansard } from '../../support/cli.js';
import { tmpDirs } from '../../support/tmp.js';

const scratch = tmpDirs('hansard-keys-data-');

describe('hansard keys --data on a folder that is not a data directory', () => {
  it('rotate on an empty folder: exit 2, names the folder and --data / HANSARD_DATA_DIR, makes nothing', async () => {
    const root = scratch.make();
    mkdirSync(join(root, 'typo'));
    const r = await runHansard(['keys', 'rotate', '--data', 'typo'], { cwd: root });
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${join(root, 'typo')} is not a hansard data directory`);
    expect(r.err).toMatch(/--data DIR or HANSARD_DATA_DIR/);
    expect(readdirSync(join(root, 'typo'))).toEqual([]);
  });

  it('rotate on a missing folder: exit 2 (--json: the error object), nothing made', async () => {
    const root = scratch.make();
    const r = await runHansard(['keys', 'rotate', '--data', 'nope', '--json'], { cwd: root });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.err).error.message).toMatch(/no data directory at .*nope/);
    expect(existsSync(join(root, 'nope'))).toBe(false);
  });

  it('list on a folder of other files: exit 2, not "no signing key yet"', async () => {
    const root = scratch.make();
    mkdirSync(join(root, 'src'));
    const r = await runHansard(['keys', 'list', '--data', 'src'], { cwd: root });
    expect(r.code).toBe(2);
    expect(r.err).not.toMatch(/no signing key/);
    expect(r.err).toMatch(/is not a hansard data directory/);
  });

  it('a data directory a serve start made: list and rotate work', async () => {
    const root = scratch.make();
    const data = join(root, 'data');
    const srv = await startServer({ port: 0, host: '127.0.0.1', data, print: () => {}, log: () => {} });
    await srv.close();
    const rotated = await runHansard(['keys', 'rotate', '--data', 'data'], { cwd: root });
    expect(rotated.code, rotated.err).toBe(0);
    const listed = await runHansard(['keys', 'list', '--data', 'data', '--json'], { cwd: root });
    expect(listed.code, listed.err).toBe(0);
    expect(JSON.parse(listed.out).keys).toHaveLength(2);
  });
});

/**
 * `npm run bench:load` measures `bin/hansard serve`, which runs the built `dist/cli.js` (issue 8.10): the
 * script must build before it measures, or it reports the figures of whatever build was left in dist/.
 * `bench:board` and `npm run screenshots` start the same server (bench/serve.ts), so they build first too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const scripts = () =>
  (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts;
const source = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('npm run bench:load', () => {
  it('runs the build and then the load bench, in that order, stopping if the build fails', () => {
    expect(scripts().build).toBe('node scripts/build.mjs');
    const steps = scripts()
      ['bench:load']!.split('&&')
      .map((s) => s.trim());
    expect(steps).toEqual(['npm run build', 'tsx bench/load.ts']);
    // the bench starts the built CLI (bench/ingest-server.ts, which can also profile it), which is what
    // the build writes
    expect(source('bench/load.ts')).toContain("import { startBenchServer } from './ingest-server.js';");
    expect(source('bench/ingest-server.ts')).toMatch(
      /process\.execPath,\s*\.\.\.\(opts\.nodeArgs \?\? \[\]\),\s*opts\.checkout \? `\$\{opts\.checkout\}\/bin\/hansard` : 'bin\/hansard',\s*'serve',/,
    );
    expect(source('bin/hansard')).toContain("import('../dist/cli.js')");
  });

  it('bench:board and screenshots build first too, and start the server the same way', () => {
    expect(scripts()['bench:board']).toBe('npm run build && tsx bench/board.ts');
    expect(scripts().screenshots).toBe('npm run build && tsx scripts/screenshots.ts');
    expect(source('bench/board.ts')).toContain("import { startServer } from './serve.js';");
    expect(source('scripts/screenshots.ts')).toContain("import { startServer } from '../bench/serve.js';");
  });
});

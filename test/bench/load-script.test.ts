/**
 * `npm run bench:load` measures `bin/hansard serve`, which runs the built `dist/cli.js` (issue 8.10): the
 * script must build before it measures, or it reports the figures of whatever build was left in dist/.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('npm run bench:load', () => {
  it('runs the build and then the load bench, in that order, stopping if the build fails', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.build).toBe('node scripts/build.mjs');
    const steps = pkg.scripts['bench:load']!.split('&&').map((s) => s.trim());
    expect(steps).toEqual(['npm run build', 'tsx bench/load.ts']);
    // the bench starts the built CLI, which is what the build writes
    expect(readFileSync(join(ROOT, 'bench/load.ts'), 'utf8')).toMatch(
      /spawn\(process\.execPath, \['bin\/hansard', 'serve'/,
    );
    expect(readFileSync(join(ROOT, 'bin/hansard'), 'utf8')).toContain("import('../dist/cli.js')");
  });
});

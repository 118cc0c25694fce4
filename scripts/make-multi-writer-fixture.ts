/**
 * Makes the committed multi-writer fixture: three writer processes started at once on one new session
 * directory `test/fixtures/multi-writer/s_<ULID>/`, each appending to its own segment; the third one's wall
 * clock steps back by 5 s half way (to show that the merge keeps a writer's own order).
 *
 *   npx tsx scripts/make-multi-writer-fixture.ts [--replace] [count]
 *
 * Refuses to run when a fixture session already exists unless `--replace` is given (which removes it).
 * Prints the session directory and the writer ids.
 */
import { spawn } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newSessionId } from '../lib/log/format/ids.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'test/fixtures/multi-writer');
const child = join(root, 'test/fixtures/multi-writer-child.ts');

const args = process.argv.slice(2);
const replace = args.includes('--replace');
const count = Number(args.find((a) => a !== '--replace') ?? 200);

const existing = readdirSync(out).filter((n) => n.startsWith('s_'));
if (existing.length > 0 && !replace) {
  process.stderr.write(`${relative(root, out)} already holds ${existing.join(', ')}; pass --replace\n`);
  process.exit(2);
}
for (const n of existing) rmSync(join(out, n), { recursive: true });

/** Runs one child process and resolves with what it printed (its writer id). */
function run(argv: string[], startAt: number): Promise<string> {
  return new Promise((ok, fail) => {
    const p = spawn(process.execPath, ['--import', 'tsx', child, ...argv], {
      cwd: root,
      env: { ...process.env, HANSARD_START_AT: String(startAt) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    p.stdout.on('data', (b: Buffer) => {
      stdout += b.toString();
    });
    p.on('error', fail);
    p.on('close', (code) =>
      code === 0 ? ok(stdout.trim()) : fail(new Error(`child ${argv.join(' ')} exited ${code}`)),
    );
  });
}

const sessionDir = join(out, newSessionId());
// Started together; the children wait for this instant so that they really write at the same time.
const startAt = Date.now() + 3000;
const writers = await Promise.all([
  run([sessionDir, 'alpha-bot', String(count)], startAt),
  run([sessionDir, 'beta-bot', String(count)], startAt),
  run([sessionDir, 'gamma-bot', String(count), String(Math.floor(count / 2))], startAt),
]);
process.stdout.write(`${relative(root, sessionDir)}\n${writers.join('\n')}\n`);

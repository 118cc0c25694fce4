/**
 * `dist/hook.cjs`, what `bin/hansard` loads for `hansard hook …`. For `claude-code` and `codex` it first
 * starts the hook's watchdog (`hook-watchdog.ts`, issue 25 item 1: a supervisor process), before anything
 * can block, then runs
 * the hook bundle (`dist/hook-bundle.cjs`, `hook-entry.ts` with its dependencies) through V8's code cache
 * and hands it the watchdog. A hook runs on every tool call, and compiling the half-megabyte bundle (zod
 * most of it) is the largest part of its cost after Node's own start (docs/benchmarks.md); with the cache
 * V8 skips it. Node 20 has no `module.enableCompileCache`, hence `vm.Script` with `cachedData`.
 *
 * The cache lives in the state directory (`<state>/cache/`, private to the user: V8 trusts a cache it
 * accepts), named by Node version and the bundle's size and mtime; one V8 rejects (another build) is
 * written anew at exit. It is read only when it is a regular file, and its folder is made in bounded
 * steps (`safe-fs.ts`). Anything going wrong here falls back to a plain `require` of the bundle.
 */
import { readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire, wrap } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { mkdirs, readRegularFile } from '../api/safe-fs.js';
import { stateDir } from '../api/state-path.js';
import { hookBudgetMs, startWatchdog, type Watchdog } from './hook-watchdog.js';

/**
 * Always true, except in the build `npm run bench:hook` makes to measure what the watchdog costs
 * (scripts/build.mjs with HANSARD_BUILD_NO_WATCHDOG): a build-time constant, no runtime switch.
 */
declare const HANSARD_HOOK_WATCHDOG: boolean;

const harness = process.argv[3];
const watchdog: Watchdog | null =
  HANSARD_HOOK_WATCHDOG && (harness === 'claude-code' || harness === 'codex')
    ? startWatchdog({
        rescue: join(__dirname, 'hook-watchdog.cjs'),
        state: stateDir(process.env),
        harness: harness as 'claude-code' | 'codex',
        budgetMs: hookBudgetMs(process.env),
      })
    : null;

const bundle = join(__dirname, 'hook-bundle.cjs');

/** The bundle's exports (`hook-entry.ts`). */
interface HookEntry {
  start(watchdog: Watchdog | null): void;
}

function runCached(): HookEntry {
  const source = readFileSync(bundle, 'utf8');
  let cacheFile: string | null = null;
  let cached: Buffer | undefined;
  try {
    const st = statSync(bundle);
    cacheFile = join(
      stateDir(process.env),
      'cache',
      `hook-${process.version}-${st.size}-${Math.floor(st.mtimeMs)}.v8`,
    );
    cached = readRegularFile(cacheFile);
  } catch {
    // no cache yet (or no state directory): compile, and write one at exit
  }
  const script = new Script(wrap(source), { filename: bundle, ...(cached ? { cachedData: cached } : {}) });
  if (cacheFile !== null && (cached === undefined || script.cachedDataRejected)) {
    const file = cacheFile;
    // At exit, so that the functions the hook ran are in the cache too.
    process.once('exit', () => {
      try {
        mkdirs(dirname(file), 0o700);
        const tmp = `${file}.${process.pid}.tmp`;
        writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
        renameSync(tmp, file);
        // The caches of earlier builds (or Node versions) are of no use any more.
        for (const f of readdirSync(dirname(file)))
          if (/^hook-.*\.v8$/.test(f) && f !== basename(file)) unlinkSync(join(dirname(file), f));
      } catch {
        // a read-only state directory: no cache, the hook still ran
      }
    });
  }
  const fn = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: { exports: unknown },
    filename: string,
    dirname: string,
  ) => void;
  const mod = { exports: {} as HookEntry };
  fn.call(mod.exports, mod.exports, createRequire(bundle), mod, bundle, dirname(bundle));
  return mod.exports;
}

let entry: HookEntry | null = null;
try {
  entry = runCached();
} catch {
  // fall through to a plain require below
}
(entry ?? (createRequire(__filename)(bundle) as HookEntry)).start(watchdog);

/**
 * The real clients under test, installed on demand from npm into a cache folder outside git
 * (`<repo>/.cache/real-client`, or `HANSARD_REAL_CLIENT_CACHE`): Claude Code (`@anthropic-ai/claude-code`,
 * whose native binary ships in a per-platform package) and the Codex CLI (`@openai/codex`, likewise). A
 * second run finds them there and downloads nothing. Install scripts are not run: the binaries are taken
 * from the platform packages directly, so npm's `allowScripts` gate does not matter.
 *
 * Also the CLI of this checkout, built from source beside them (`buildHansard`), so that the hook
 * commands `hansard integrations sync` writes point at a `bin/hansard` whose bundle is the current code
 * (dist/ may be stale, or rebuilt by someone else meanwhile).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The client versions these tests were written against (test/fixtures/real-client/README.md). */
export const CLAUDE_CODE_VERSION = '2.1.328';
export const CODEX_VERSION = '0.169.0';

/** Where the clients and the built CLI live. */
export function cacheDir(): string {
  return process.env.HANSARD_REAL_CLIENT_CACHE || join(ROOT, '.cache', 'real-client');
}

/** Paths of the installed clients. */
export interface Clients {
  /** Claude Code's native binary */
  claude: string;
  /** Codex's native binary */
  codex: string;
  /** whether this call installed them (false: they were in the cache already) */
  installed: boolean;
  /** how long the install took, ms (0 when cached) */
  installMs: number;
}

function claudeBinary(nm: string): string {
  return join(nm, '@anthropic-ai', `claude-code-${platform()}-${arch()}`, 'claude');
}

function codexBinary(nm: string): string {
  const triple =
    platform() === 'linux'
      ? `${arch() === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-musl`
      : `${arch() === 'arm64' ? 'aarch64' : 'x86_64'}-apple-darwin`;
  return join(nm, '@openai', `codex-${platform()}-${arch()}`, 'vendor', triple, 'bin', 'codex');
}

/**
 * Installs both clients at the pinned versions unless the cache has them (`npm install --prefix`, about
 * 770 MB unpacked), and checks each answers `--version` with its version.
 * @throws Error when npm fails or a binary is missing or reports another version
 */
export function ensureClients(): Clients {
  const dir = cacheDir();
  const nm = join(dir, 'node_modules');
  const claude = claudeBinary(nm);
  const codex = codexBinary(nm);
  let installed = false;
  const t0 = Date.now();
  if (!existsSync(claude) || !existsSync(codex)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{"name":"hansard-real-client-cache","private":true}\n');
    execFileSync(
      'npm',
      [
        'install',
        '--prefix',
        dir,
        '--no-save',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`,
        `@openai/codex@${CODEX_VERSION}`,
      ],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    installed = true;
  }
  for (const [bin, want] of [
    [claude, CLAUDE_CODE_VERSION],
    [codex, CODEX_VERSION],
  ] as const) {
    if (!existsSync(bin)) throw new Error(`npm installed no ${bin} (platform ${platform()}-${arch()})`);
    const v = execFileSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000 });
    if (!v.includes(want)) throw new Error(`${bin} --version says ${v.trim()}, expected ${want}`);
  }
  return { claude, codex, installed, installMs: installed ? Date.now() - t0 : 0 };
}

/**
 * Builds this checkout's CLI into `<cache>/app` (scripts/build.mjs with HANSARD_BUILD_OUTDIR) beside a
 * copy of bin/hansard and package.json, and returns that bin/hansard. `integrations sync` run from it
 * writes hook commands naming it (it finds its package root by package.json).
 * @throws Error when the build fails (esbuild's message on stderr)
 */
export function buildHansard(): string {
  const app = join(cacheDir(), 'app');
  execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], {
    cwd: ROOT,
    env: { ...process.env, HANSARD_BUILD_OUTDIR: join(app, 'dist') },
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  mkdirSync(join(app, 'bin'), { recursive: true });
  copyFileSync(join(ROOT, 'bin/hansard'), join(app, 'bin/hansard'));
  copyFileSync(join(ROOT, 'package.json'), join(app, 'package.json'));
  return join(app, 'bin/hansard');
}

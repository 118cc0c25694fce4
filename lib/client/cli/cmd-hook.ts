/**
 * `hansard hook claude-code|codex|ship` in the full CLI (issue 11). `bin/hansard` normally runs these from
 * their own small bundle (`dist/hook.js`, `lib/client/capture/hook-main.ts`) before commander loads; this
 * registration lists them in `hansard --help` and runs them when the CLI is used in-process. Like the
 * bundle, they exit 0 whatever happens: a hook must never get in the agent's way.
 */
import type { Command } from 'commander';
import type { Io } from '../api/io.js';
import { runClaudeHook, runCodexHook } from '../capture/hook.js';
import { runShipper, shipSummary } from '../capture/ship.js';
import { stateDir } from '../capture/state-dir.js';

/** Registers `hansard hook …`. */
export function registerHook(program: Command, io: Io): void {
  const hook = program
    .command('hook')
    .description('capture as it happens: the programs Claude Code and Codex run (docs/capture.md)');
  hook
    .command('claude-code')
    .description('a Claude Code hook: the event JSON on stdin; prints nothing or the SessionStart answer')
    .action(() => claudeCodeHook(io));
  hook
    .command('codex')
    .description("Codex's notify program: the event JSON is the last argument")
    .argument('[json]', 'the notify payload')
    .action((json?: string) => codexHook(json, io));
  hook
    .command('ship')
    .description('upload the capture spool now (hooks start this on their own, detached)')
    .action(() => ship(io));
}

/** What the hooks run with: the environment, and how to start this command again (the detached shipper). */
function hookContext(io: Io) {
  return { env: io.env, selfCommand: [process.execPath, process.argv[1] ?? 'hansard'] };
}

/** `hansard hook claude-code`: the event JSON from stdin; prints the SessionStart answer when there is one. */
export async function claudeCodeHook(io: Io): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const out = await runClaudeHook(Buffer.concat(chunks).toString('utf8'), hookContext(io));
  if (out) io.stdout.write(`${out}\n`);
}

/** `hansard hook codex [json]`: Codex's notify program, the event JSON its last argument. */
export async function codexHook(json: string | undefined, io: Io): Promise<void> {
  await runCodexHook(json, hookContext(io));
}

/** `hansard hook ship`: uploads the capture spool now and says what it sent on stderr. */
export async function ship(io: Io): Promise<void> {
  io.stderr.write(`${shipSummary(await runShipper(stateDir(io.env), io.env))}\n`);
}

/**
 * `lib/importers`: mapping what coding agents leave behind to v3 log events (DESIGN §2): the Claude Code
 * transcript and stream-json importers behind `hansard import claude-code` and the Codex rollout and
 * `codex exec --json` importers behind `hansard import codex`, and the hcn stream recorder behind
 * `hansard import hcn`, `observe` and `run` (DESIGN §6, docs/import.md).
 */
export * from './claude-code-stream.js';
export * from './claude-code-transcript.js';
export * from './codex.js';
export * from './codex-exec.js';
export * from './hcn.js';

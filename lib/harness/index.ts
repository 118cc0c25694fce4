/**
 * `lib/harness`: mapping what coding agents leave behind to v3 log events (DESIGN §2). Today: the Claude
 * Code transcript importer behind `hansard import claude-code` (DESIGN §6).
 */
export * from './claude-code-transcript.js';

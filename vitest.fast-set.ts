/**
 * The in-process test files (docs/testing.md): the folders of in-process suites, the in-process files of
 * test/attack and test/client, and the files of those folders that are not fast. `npm run test:fast`
 * (vitest.fast.config.ts) runs this set alone; `npm test` (vitest.config.ts) runs it as its own project
 * with isolate: false (a worker imports the app once for many files) beside the rest, each file isolated.
 * A new file in these folders joins the set; when it needs an emulator, a browser or a process of the
 * built CLI, or takes seconds, add it to SLOW; a file that leaves global state behind (process.env, a
 * patched global, an open server) breaks the files after it in its worker: restore it in afterAll.
 */
/** The folders of in-process tests: the record format, the service, HTTP on loopback, importers, audit. */
export const FAST = [
  'test/log/**/*.test.ts',
  'test/service/**/*.test.ts',
  'test/http/**/*.test.ts',
  'test/importers/**/*.test.ts',
  'test/audit/**/*.test.ts',
  'test/architecture/**/*.test.ts',
  'test/store/fs/**/*.test.ts',
  'test/ratelimit/memory.test.ts',
];

/**
 * In-process files of test/attack and test/client (the rest of those folders starts the built CLI, a
 * hook process, an emulator or a browser, or takes seconds): each under 2 s in a full run. A new file
 * there runs in `npm test` only until it is named here.
 */
export const FAST_FILES = [
  'test/attack/board-correction-user.test.ts',
  'test/attack/board-fixes-bloat.test.ts',
  'test/attack/board-invisible-more.test.ts',
  'test/attack/board-invisible-names.test.ts',
  'test/attack/board-lone-person-view.test.ts',
  'test/attack/board-lone-surrogate.test.ts',
  'test/attack/board-span-line.test.ts',
  'test/attack/board-summary-lost.test.ts',
  'test/attack/board-summary-resume.test.ts',
  'test/attack/board-title-correction.test.ts',
  'test/attack/board-title-fix-badts.test.ts',
  'test/attack/board-title-pending.test.ts',
  'test/attack/board-verdict-stampede.test.ts',
  'test/attack/content-lookalikes-more.test.ts',
  'test/attack/content-lookalikes.test.ts',
  'test/attack/digests-bundle-substitution.test.ts',
  'test/attack/digests-noncanonical.test.ts',
  'test/attack/digests-post-flood.test.ts',
  'test/attack/digests-retired-key.test.ts',
  'test/attack/digests-same-sid-tenant.test.ts',
  'test/attack/digests-upload-edit-during-outcome.test.ts',
  'test/attack/digests-upload-edit-during.test.ts',
  'test/attack/origin-secret-guard.test.ts',
  'test/attack/origin-secret-lambda.test.ts',
  'test/attack/status-data-loss.test.ts',
  'test/attack/status-evidence-corrections.test.ts',
  'test/attack/status-evidence-forge.test.ts',
  'test/attack/status-evidence-provenance.test.ts',
  'test/attack/upload-resync-splice.test.ts',
  'test/attack/verdict-provenance-forge.test.ts',
  'test/attack/verdict-shell-tricks.test.ts',
  'test/attack/work-content-bypass.test.ts',
  'test/attack/work-idempotency-keys.test.ts',
  'test/attack/work-owner-takeover.test.ts',
  'test/attack/work-ownership.test.ts',
  'test/client/capture/deferred.test.ts',
  'test/client/capture/doctor-failures.test.ts',
  'test/client/capture/state-dir.test.ts',
  'test/client/capture/whole-ms-timeouts.test.ts',
  'test/client/cli/export-replay-url.test.ts',
  'test/client/cli/help-names-docs.test.ts',
  'test/client/cli/import-claude-code-cli.test.ts',
  'test/client/cli/import-codex-cli.test.ts',
  'test/client/cli/import-person-cli.test.ts',
  'test/client/cli/keys-data-dir.test.ts',
  'test/client/cli/serve-key-line.test.ts',
  'test/client/cli/text-cut-cli.test.ts',
  'test/client/cli/upload-changed-bytes.test.ts',
  'test/client/cli/upload-edits.test.ts',
  'test/client/cli/verify-cli.test.ts',
  'test/client/cli/verify-codes-bundle.test.ts',
  'test/client/cli/verify-sid-needs-tenant.test.ts',
  'test/client/cli/work-lease-read.test.ts',
  'test/client/mcp/line-limit.test.ts',
];

/** Files of those folders left to `npm test`: why, and their seconds in a full run (2 workers, 2 cores). */
export const SLOW = [
  // emulators: DynamoDB Local or s3rver
  'test/service/board/overview-5000-dynamo.test.ts', // 57 s
  'test/service/digests/digests.test.ts', // 59 s
  'test/service/usage/backends.test.ts', // 18 s
  // processes: a child process per case, or a real `hansard` process
  'test/http/hostile-replay.test.ts', // 38 s
  'test/log/segment-blocks.test.ts', // 17 s
  'test/log/writer.test.ts', // 4.6 s
  'test/audit/verify-digests-process.test.ts', // 5.4 s
  // seconds of their own (large inputs, property runs, many requests)
  'test/audit/locate-chunks.test.ts', // 22 s
  'test/audit/tamper.test.ts', // 7.2 s
  'test/http/board-live.test.ts', // 3.4 s
  'test/http/digests-serve.test.ts', // 5.4 s
  'test/http/hostile-http.test.ts', // 3.4 s
  'test/http/ingest.test.ts', // 6.6 s
  'test/http/isolation.test.ts', // 6.2 s
  'test/http/openapi.test.ts', // 2.7 s
  'test/http/tenant-limits.test.ts', // 11 s
  'test/log/attribution-compact.test.ts', // 4.0 s
  'test/log/corrections-compact.test.ts', // 8.4 s
  'test/log/corrections.test.ts', // 5.0 s
  'test/log/envelope-scan-fuzz.test.ts', // 3.2 s
  'test/log/escape-fast.test.ts', // 4.5 s
  'test/log/fast-replay.test.ts', // 16 s
  'test/log/fast-text.test.ts', // 4.8 s
  'test/log/id-table.test.ts', // 15 s
  'test/log/redact.test.ts', // 4.8 s
  'test/log/writer-line-bounds.test.ts', // 3.1 s
  'test/service/board/overview-5000.test.ts', // 4.9 s
  'test/service/board/overview.test.ts', // 27 s
  'test/service/digests/ingest.test.ts', // 6.6 s
];

/**
 * hansard's version, recorded in every `writer.start` (`meta.hansard_version`). Here, in the format's
 * folder, because the writer records it and lib/log imports nothing outside itself; `lib/version.ts`
 * re-exports it for everything else.
 */
export const HANSARD_VERSION = '0.1.0';

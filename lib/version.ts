/**
 * hansard's version, equal to package.json's. Defined in lib/log/format/version.ts, beside the writer that
 * records it, so that lib/log imports nothing outside itself.
 */
export { HANSARD_VERSION } from './log/format/version.js';

/**
 * `lib/log`: the v3 session log format (seed 001, DESIGN §3). Event schemas and ids, the segment writer,
 * the lenient streaming reader, the k-way merge, and replay. No network I/O here.
 */

export * from './analyse/inspect.js';
export * from './analyse/verify.js';
export * from './format/codec.js';
export * from './format/escape.js';
export * from './format/events.js';
export * from './format/ids.js';
export * from './format/provenance.js';
export * from './format/text-cut.js';
export * from './format/time.js';
export * from './read/merge.js';
export * from './read/reader.js';
export * from './read/session-dir.js';
export * from './redact/redact.js';
export * from './replay/attribution.js';
export * from './replay/corrections.js';
export * from './replay/replay.js';
export * from './write/field-limits.js';
export * from './write/writer.js';

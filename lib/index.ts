/**
 * The hansard library: record a session with `openSession`, read and merge segments, replay.
 * @example
 * import { openSession } from 'hansard';
 * const s = openSession('./sessions', { agent: 'my-bot' });
 * s.message({ user_id: 'priya', text: 'restart the payments worker' });
 * s.end();
 */
export * from './log/index.js';
export { HANSARD_VERSION } from './version.js';

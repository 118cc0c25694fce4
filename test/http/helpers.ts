/** Moved to test/support/ (server.ts, http.ts, segments.ts, stored.ts); this re-export goes once unused. */
export {
  type Answer,
  expectError,
  expectNoStackTrace,
  type RequestOptions,
  request,
} from '../support/http.js';
export { type LocalSegment, localReplay, readLocal, splitLines, writeSession } from '../support/segments.js';
export { makeTenant, mint, startServer, type TestServer, type TestTenant } from '../support/server.js';
export {
  expectRefusedUnchanged,
  postChunk,
  sleep,
  storedSegmentPath,
  tenantsDigest,
  upload,
} from '../support/stored.js';

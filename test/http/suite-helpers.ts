/** Moved to test/support/ (server.ts, http.ts, stored.ts); this re-export goes once unused. */
export {
  expectAlive,
  leaked,
  navigate,
  type RawAnswer,
  type Req,
  rawExchange,
  rawJson,
  request as send,
  TYPED_NAVIGATION,
} from '../support/http.js';
export { type RealServer, startRealServer } from '../support/server.js';
export { snapshot } from '../support/stored.js';

/**
 * A real hansard server in this process with msw in front of it (test/client/cli/upload-*.test.ts): the upload
 * client's requests go through msw, whose handlers a test installs to hold, fail or answer for them, and
 * the rest pass through to the server on loopback.
 */
import { mkdirSync } from 'node:fs';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { openLocalStores } from '../../lib/deploy/local.js';
import { makeTenant, startServer, type TestServer } from './server.js';

/** The server of a suite and the msw server in front of it; fields readable from `beforeAll` on. */
export interface MswServer {
  /** the msw server: `msw.use(handlers)` in a test; its handlers are reset after each */
  msw: ReturnType<typeof setupServer>;
  url: string;
  /** tenant `local`'s admin token */
  token: string;
  /** scratch space for local session directories (exists) */
  tmp: string;
}

/**
 * Registers the hooks of a suite: `beforeAll` starts the server (`startServer`, node-server leaving the
 * global Request/Response to msw), creates tenant `local` and starts msw, letting unhandled requests
 * through; `afterEach` resets msw's handlers; `afterAll` closes both.
 */
export function useMswServer(): MswServer {
  const msw = setupServer();
  let srv: TestServer | undefined;
  let token = '';
  const live = () => {
    if (!srv) throw new Error('useMswServer: the server starts in beforeAll; read it in a test or a hook');
    return srv;
  };
  beforeAll(async () => {
    srv = await startServer({}, openLocalStores, { overrideGlobalObjects: false });
    token = (await makeTenant(srv, 'local')).admin;
    mkdirSync(srv.workDir, { recursive: true });
    msw.listen({ onUnhandledRequest: 'bypass' });
  });
  afterEach(() => {
    msw.resetHandlers();
  });
  afterAll(async () => {
    msw.close();
    await srv?.close();
  });
  return {
    msw,
    get url() {
      return live().url;
    },
    get token() {
      return token;
    },
    get tmp() {
      return live().workDir;
    },
  };
}

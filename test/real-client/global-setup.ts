/**
 * Once per `npm run test:real-client`: installs the real clients (or finds them cached) and builds this
 * checkout's CLI; the tests `inject` the paths.
 */
import type { TestProject } from 'vitest/node';
import { buildHansard, ensureClients } from './support/clients.js';

declare module 'vitest' {
  export interface ProvidedContext {
    claudeBin: string;
    codexBin: string;
    hansardBin: string;
    /** why this checkout's CLI did not build ('' when it did); the capture suites fail with it */
    hansardBuildError: string;
  }
}

export default function setup(project: TestProject): void {
  const t0 = Date.now();
  const clients = ensureClients();
  // A build that fails (work in progress elsewhere in the tree) fails the suites that need the CLI, not
  // the payload suite, which needs none.
  let hansard = '';
  let buildError = '';
  try {
    hansard = buildHansard();
  } catch (err) {
    buildError = `building this checkout's CLI failed: ${(err as Error).message}`;
  }
  process.stderr.write(
    `real-client: ${clients.installed ? `installed the clients in ${clients.installMs} ms` : 'clients cached'}; ` +
      `${buildError ? 'hansard did NOT build' : 'built hansard'}; setup ${Date.now() - t0} ms\n`,
  );
  project.provide('claudeBin', clients.claude);
  project.provide('codexBin', clients.codex);
  project.provide('hansardBin', hansard);
  project.provide('hansardBuildError', buildError);
}

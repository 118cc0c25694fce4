/**
 * vitest's globalSetup (vitest.config.ts): the services a run shares, and the end-of-run leak check.
 *
 * Shared services. DynamoDB Local (a JVM, 2 s to start on a quiet machine and over 30 s on a loaded one),
 * s3rver and Chromium were started by each test file that used them; now once per run, on the first file
 * that asks (a run that needs none starts none), and stopped at the end. A small broker on 127.0.0.1
 * answers `GET /dynamo`, `/s3`, `/postgres`, `/chromium` with `{"endpoint": …}`; its address is `provide`d to the
 * workers (harness/shared.ts). Each test file keeps its own namespace in them: fresh table and
 * bucket names (harness/dynamodb-local.ts, s3rver.ts), its own browser context (browser.ts). The
 * emulators are tethered (emulator-processes.ts) and Chromium ends with its pipe, so none outlives the
 * run even when vitest is killed.
 *
 * Leak check. Each test file checks its own processes when it ends (test/support/leak-check.ts); this
 * teardown checks again once the services are stopped: any process still carrying a marker of this run
 * (test files' children, even those adopted by init), or any child of vitest's own process other than its
 * workers, fails the run (exit code 1) with its pid and command line, and is killed.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BrowserServer, chromium } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { type EmulatorProcess, launchDynamoLocal, launchS3rver } from '../../harness/emulator-processes.js';
import { launchPostgres } from '../../harness/postgres.js';
import type { SharedService } from '../../harness/shared.js';
import { CHROMIUM, CHROMIUM_ARGS } from './browser.js';
import {
  descendants,
  describeProcs,
  FILE_MARKER,
  isRunnerProcess,
  killAll,
  lingering,
  marked,
  type ProcInfo,
} from './processes.js';
import '../../harness/shared.js';

/** A started shared service. */
interface Started {
  endpoint: string;
  stop(): Promise<void>;
  /** SIGKILL now, from a process `exit` handler */
  killNow(): void;
}

const LAUNCH: Record<SharedService, () => Promise<Started>> = {
  dynamo: () => launchDynamoLocal(),
  s3: () => launchS3rver(),
  // A new cluster per run (harness/postgres.ts); each test file makes its own databases and roles in it.
  postgres: () => launchPostgres(),
  chromium: async () => {
    const server: BrowserServer = await chromium.launchServer({
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
    return {
      endpoint: server.wsEndpoint(),
      stop: () => server.close(),
      killNow: () => server.process().kill('SIGKILL'),
    };
  },
};

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const run = randomBytes(6).toString('hex');
  const starting = new Map<SharedService, Promise<Started>>();
  const started: Started[] = [];
  const broker = createServer((req, res) => {
    const name = req.url?.slice(1) as SharedService;
    const answer = (status: number, body: object) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (!(name in LAUNCH)) return answer(404, { error: `no shared service ${name}` });
    let launch = starting.get(name);
    if (!launch) {
      launch = LAUNCH[name]().then((s: Started | EmulatorProcess) => {
        started.push(s);
        return s;
      });
      starting.set(name, launch);
    }
    launch.then(
      (s) => answer(200, { endpoint: s.endpoint }),
      (err: Error) => answer(500, { error: err.message }),
    );
  });
  await new Promise<void>((r) => broker.listen(0, '127.0.0.1', r));
  project.provide('hansardServices', `http://127.0.0.1:${(broker.address() as AddressInfo).port}`);
  project.provide('hansardRun', run);
  const killOnExit = () => {
    for (const s of started) s.killNow();
  };
  process.on('exit', killOnExit);

  return async () => {
    broker.closeAllConnections();
    broker.close();
    // A service whose start is still under way is stopped once it has started.
    await Promise.all([...starting.values()].map((p) => p.then((s) => s.stop()).catch(() => {})));
    process.off('exit', killOnExit);
    const left = await lingering(() => leftBehind(run), 5000);
    if (left.length === 0) return;
    killAll(left);
    process.exitCode = 1;
    console.error(
      `\nleak check: ${left.length} process(es) outlived their test file (killed now); each test must stop what it starts:\n${describeProcs(left)}\n`,
    );
  };
}

/** The run's test files' processes still alive, and vitest's own children other than its workers. */
function leftBehind(run: string): ProcInfo[] {
  const seen = new Map<number, ProcInfo>();
  for (const p of [...marked(FILE_MARKER, (v) => v.startsWith(`${run}:`)), ...descendants(process.pid)]) {
    if (p.pid !== process.pid && !isRunnerProcess(p)) seen.set(p.pid, p);
  }
  return [...seen.values()];
}

/**
 * s3rver with the shim (harness/s3rver.ts) as a process of its own, for the run's shared emulator
 * (harness/emulator-processes.ts starts it with `--openssl-legacy-provider`): prints
 * `s3rver http://127.0.0.1:PORT` once it serves; on SIGTERM closes and removes its directory.
 */
import { runS3rver } from './s3rver.js';

const server = await runS3rver();
process.stdout.write(`s3rver ${server.endpoint}\n`);
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.once(sig, () => {
    void server.close().finally(() => process.exit(0));
  });
}

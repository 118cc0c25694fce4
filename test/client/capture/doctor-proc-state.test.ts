/**
 * `hansard doctor` with the hooks' state directory under /proc (issue 25 item 1's first example, where
 * `mkdir` answers ENOENT under a folder that exists): Node's recursive mkdir loops there for ever at full
 * CPU, and doctor's state-directory check made it so. The real built CLI, killed by the test if it hangs.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hookEnv, useBuiltCli } from './helpers.js';

const cli = useBuiltCli('doctor-proc');
const KILL_AFTER = 20_000;

describe.skipIf(!existsSync('/proc/self/status'))('hansard doctor, its state directory under /proc', () => {
  it('ends and says the state directory cannot be written', async () => {
    const child = spawn(process.execPath, [cli.bin, 'doctor', '--json'], {
      env: hookEnv({
        HANSARD_STATE_DIR: `/proc/hansard-test-${process.pid}/state`,
        HANSARD_URL: 'http://127.0.0.1:9',
        HANSARD_TOKEN: 'hns_doctor_proc',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    const timer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER);
    const [code, signal] = await new Promise<[number | null, string | null]>((done) =>
      child.on('close', (c, s) => done([c, s])),
    );
    clearTimeout(timer);
    expect(signal).toBeNull();
    expect(code).toBe(1);
    const findings = JSON.parse(out).findings as { check: string; ok: boolean; message: string }[];
    expect(findings.find((f) => f.check === 'state_dir')).toMatchObject({ ok: false });
  }, 60_000);
});

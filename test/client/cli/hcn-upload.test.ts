/**
 * `hansard observe --upload` and `hansard run --upload` (issue 10 item 3): the recorded hcn run is shipped
 * to a real server on loopback when the stream ends, and the server replays it. `observe` here reads a
 * stdin the test passes in-process (`IoWithStdin`); hcn-cli.test.ts drives it through a real child.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../lib/client/cli/main.js';
import { request } from '../../support/http.js';
import { makeTenant, startServer, type TestServer } from '../../support/server.js';
import { tmpDirs } from '../../support/tmp.js';

const REAL = 'test/fixtures/real';
const scratch = tmpDirs('hansard-hcn-upload-');
let srv: TestServer;
let admin: string;
beforeAll(async () => {
  srv = await startServer();
  admin = (await makeTenant(srv, 'acme')).admin;
  mkdirSync(srv.workDir, { recursive: true }); // hcn runs in the command's cwd
});
afterAll(() => srv.close());

async function cli(args: string[], stdin?: Buffer, env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const code = await runCli(args, {
    stdout: { write: (s: string | Uint8Array) => (out += String(s)) },
    stderr: { write: (s: string) => (err += s) },
    env: { HANSARD_URL: srv.url, HANSARD_TOKEN: admin, PATH: process.env.PATH, ...env },
    cwd: srv.workDir,
    ...(stdin ? { stdin: Readable.from([stdin]) } : {}),
  } as Parameters<typeof runCli>[1]);
  return { code, out, err };
}

async function replayTypes(sid: string): Promise<string[]> {
  const r = await request(srv, 'GET', `/v1/sessions/${sid}/replay?format=ndjson`, { token: admin });
  expect(r.status).toBe(200);
  return r.text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).type as string);
}

describe('recording commands with --upload', () => {
  it('observe --upload --json ships the session; the server replays the interrupted run', async () => {
    const stream = readFileSync(join(REAL, 'hcn-observer-doc-example.ndjson'));
    const r = await cli(['observe', '--out', scratch.make(), '--upload', '--json'], stream);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.uploaded).toEqual({ sid: j.sid, sent_lines: 7 });
    expect(await replayTypes(j.sid)).toEqual([
      'writer.start',
      'note',
      'turn.start',
      'note',
      'note',
      'turn.end',
      'writer.end',
    ]);
  });

  it('observe --upload without a token: exit 2, naming the session directory that stays', async () => {
    const stream = readFileSync(join(REAL, 'hcn-observer-doc-example.ndjson'));
    const r = await cli(['observe', '--out', scratch.make(), '--upload'], stream, { HANSARD_TOKEN: '' });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^hansard: the session stays in \S+s_\w+\nhansard: no token: pass --token/);
  });

  it('observe with an empty stdin: exit 2, nothing kept', async () => {
    const r = await cli(['observe', '--out', scratch.make()], Buffer.alloc(0));
    expect([r.code, r.err]).toEqual([
      2,
      'hansard: stdin held no hcn-observer/1 records (nothing was kept)\n',
    ]);
  });

  it('run --upload ships the run after hcn exits', async () => {
    const dir = scratch.make();
    const hcn = join(dir, 'hcn');
    const fixture = join(process.cwd(), REAL, 'hcn-bare-claude.ndjson');
    writeFileSync(
      hcn,
      `#!${process.execPath}\nprocess.stdout.write(require('node:fs').readFileSync(${JSON.stringify(fixture)}));\n`,
    );
    chmodSync(hcn, 0o755);
    const r = await cli(['run', '--hcn', hcn, '--out', scratch.make(), '--upload', 'claude', '--', 'say OK']);
    expect(r.code, r.err).toBe(0);
    const sid = /hansard: uploaded (s_\w+) \(7 lines\)/.exec(r.err)![1]!;
    expect(await replayTypes(sid)).toEqual([
      'writer.start',
      'message',
      'turn.start',
      'note',
      'agent.output',
      'turn.end',
      'writer.end',
    ]);
  });
});

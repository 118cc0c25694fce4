/**
 * `hansard import hcn`, `hansard observe` and `hansard run` (issue 10 item 3, seed 002): hcn is not
 * installable here, so `run` drives a stand-in `hcn` the test writes (a node script that prints a recorded
 * stream from test/fixtures/real and exits with a chosen code). `observe` and the byte-exact and signal
 * checks of `run` use a real `hansard` child process (the CLI from source through tsx).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeEvent, type LogEvent, readSegmentFile } from '../../../lib/log/index.js';
import { runHansard } from '../../support/cli.js';
import { tmpDirs } from '../../support/tmp.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const REAL = join(ROOT, 'test/fixtures/real');
const scratch = tmpDirs('hansard-hcn-cli-');
const children: ChildProcess[] = [];
/** stand-in folders: each holds its `hcn`'s pid, killed after the test (it runs in its own process group) */
const standIns: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const dir of standIns.splice(0)) {
    try {
      process.kill(Number(readFileSync(join(dir, 'pid'), 'utf8')), 'SIGKILL');
    } catch {
      // not started, or already gone
    }
  }
});

type Ev = LogEvent & Record<string, unknown>;
async function sessionEvents(dir: string): Promise<Ev[]> {
  const segs = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  expect(segs).toHaveLength(1);
  const events: Ev[] = [];
  for await (const item of readSegmentFile(join(dir, segs[0]!))) {
    if (item.kind === 'problem') throw new Error(item.problem.message);
    events.push(decodeEvent(item.event) as Ev);
  }
  return events;
}
const types = (events: Ev[], type: string) => events.filter((e) => e.type === type);

/**
 * A stand-in `hcn` in a fresh folder: prints `STANDIN_FIXTURE` to stdout (all of it, or with
 * `STANDIN_HANG=N` its first N lines, then waits to be killed), a provenance line to stderr, records its
 * argv in `argv.json`, and exits with `STANDIN_EXIT`. On SIGINT it does what hcn does (prints `done` with
 * cause `killed`, exits 130) and counts the SIGINTs it got in `sigints`.
 */
function standIn(): { dir: string; hcn: string; argv: () => string[]; sigints: () => number } {
  const dir = scratch.make();
  const hcn = join(dir, 'hcn');
  writeFileSync(
    hcn,
    `#!${process.execPath}
const fs = require('node:fs');
fs.writeFileSync(${JSON.stringify(join(dir, 'pid'))}, String(process.pid));
fs.writeFileSync(${JSON.stringify(join(dir, 'argv.json'))}, JSON.stringify(process.argv.slice(2)));
const bytes = fs.readFileSync(process.env.STANDIN_FIXTURE);
process.stderr.write('provenance: effort = "medium" (profile)\\n');
let sigints = 0;
process.on('SIGINT', () => {
  // as hcn does: end the run, say so with done (cause killed), exit; count the SIGINTs that arrived
  fs.writeFileSync(${JSON.stringify(join(dir, 'sigints'))}, String(++sigints));
  if (sigints === 1) setTimeout(() => process.stdout.write('{"kind":"done","exitCode":null,"cause":"killed"}\\n', () => process.exit(130)), 300);
});
if (process.env.STANDIN_HANG) {
  const n = Number(process.env.STANDIN_HANG);
  let at = 0;
  for (let i = 0; i < n; i++) at = bytes.indexOf(10, at) + 1;
  process.stdout.write(bytes.subarray(0, at));
  setInterval(() => {}, 1000);
} else {
  process.stdout.write(bytes, () => process.exit(Number(process.env.STANDIN_EXIT ?? 0)));
}
`,
  );
  chmodSync(hcn, 0o755);
  standIns.push(dir);
  return {
    dir,
    hcn,
    argv: () => JSON.parse(readFileSync(join(dir, 'argv.json'), 'utf8')),
    sigints: () => Number(readFileSync(join(dir, 'sigints'), 'utf8')),
  };
}

/** The CLI from source in its own process: stdout as bytes, stderr as text, the exit code. */
function hansardProcess(
  args: string[],
  opts: { env?: Record<string, string>; stdin?: Buffer; detached?: boolean } = {},
): { child: ChildProcess; out: () => Buffer; err: () => string; exited: Promise<number | null> } {
  const main = `const { runCli } = await import(${JSON.stringify(`${ROOT}/lib/client/cli/main.ts`)});
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
process.exitCode = await runCli(process.argv.slice(1), io);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', main, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: opts.detached ?? false,
  });
  children.push(child);
  const out: Buffer[] = [];
  let err = '';
  child.stdout!.on('data', (b: Buffer) => out.push(b));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  child.stdin!.end(opts.stdin ?? Buffer.alloc(0));
  const exited = new Promise<number | null>((done) =>
    child.on('close', (code, signal) => done(code ?? (signal ? -1 : null))),
  );
  return { child, out: () => Buffer.concat(out), err: () => err, exited };
}

describe('hansard import', () => {
  it('lists the sources it knows, hcn among them', async () => {
    const r = await runHansard(['import', '--help'], { cwd: ROOT });
    expect(r.code).toBe(0);
    for (const s of ['claude-code', 'codex', 'hcn']) expect(r.out).toMatch(new RegExp(`^  ${s} `, 'm'));
    expect(r.out).toContain('Sources: claude-code (transcripts), codex (rollouts), hcn');
    const bare = await runHansard(['import'], { cwd: ROOT }); // no source: the same list, as a usage error
    expect(bare.code).toBe(2);
    expect(bare.err).toMatch(/^ {2}hcn \[options\] <stream> /m);
  });

  it('import hcn FILE --json: the counts of the recorded stream', async () => {
    const out = scratch.make();
    const r = await runHansard(
      ['import', 'hcn', join(REAL, 'hcn-bare-claude.ndjson'), '--out', out, '--json'],
      {
        cwd: ROOT,
      },
    );
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.counts).toMatchObject({
      prompts: 0,
      turns: 1,
      actions: 0,
      results: 0,
      outputs: 1,
      subagentWriters: 0,
    });
    expect(j.done).toEqual({ exitCode: 0, cause: 'clean' });
  });

  it("import hcn of a harness's own output: exit 2, says what it is, keeps nothing", async () => {
    const out = scratch.make();
    const r = await runHansard(
      ['import', 'hcn', join(REAL, 'hcn-harnesses-codex-tool.ndjson'), '--out', out],
      {
        cwd: ROOT,
      },
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain("Codex's own `codex exec --json` output, not an hcn stream");
    expect(readdirSync(out)).toEqual([]);
  });
});

describe('import hcn and run when the file or the session folder fails', () => {
  it('import hcn: a missing file says it cannot be read; an --out that is a file says the session cannot be written', async () => {
    const missing = await runHansard(['import', 'hcn', 'nope.ndjson', '--out', scratch.make()], {
      cwd: ROOT,
    });
    expect([missing.code, missing.err]).toEqual([
      2,
      'hansard: cannot read nope.ndjson: no such file or directory\n',
    ]);
    const file = join(scratch.make(), 'a-file');
    writeFileSync(file, '');
    const r = await runHansard(['import', 'hcn', join(REAL, 'hcn-bare-codex.ndjson'), '--out', file], {
      cwd: ROOT,
    });
    expect([r.code, r.err]).toEqual([
      2,
      `hansard: cannot write the session under ${file}: not a directory\n`,
    ]);
  });

  it("run: a session that cannot be written never stops the run (output passes through, exit code is hcn's)", async () => {
    const s = standIn();
    const file = join(scratch.make(), 'a-file');
    writeFileSync(file, '');
    const r = await runHansard(['run', '--hcn', s.hcn, '--out', file, 'codex', '--', 'hi'], {
      cwd: ROOT,
      env: { ...process.env, STANDIN_FIXTURE: join(REAL, 'hcn-bare-codex.ndjson'), STANDIN_EXIT: '5' },
    });
    expect(r.code).toBe(5);
    expect(r.out).toBe(readFileSync(join(REAL, 'hcn-bare-codex.ndjson'), 'utf8'));
    expect(r.err).toContain("hansard: recording stopped (hcn's output still passes through): ");
    expect(r.err).not.toContain('hansard: recorded');
  });
});

describe('hansard observe (a real child reading the observer stream on stdin)', () => {
  it('records the doc example: started opens the writer, skipped is a coverage gap, no done → interrupted', async () => {
    const out = scratch.make();
    const p = hansardProcess(['observe', '--out', out], {
      stdin: readFileSync(join(REAL, 'hcn-observer-doc-example.ndjson')),
    });
    expect(await p.exited).toBe(0);
    const dir = p.out().toString().trim();
    expect(dirname(dir)).toBe(out);
    expect(p.err()).toContain('1 skipped record (coverage gaps); no done: recorded as interrupted');
    const events = await sessionEvents(dir);
    expect(events[0]!.meta).toMatchObject({ agent: 'claude', app: 'hansard observe' });
    expect(types(events, 'turn.end').map((e) => e.status)).toEqual(['interrupted']);
    expect(types(events, 'writer.end')).toHaveLength(1);
  }, 30_000);
});

describe('hansard run (a stand-in hcn)', () => {
  it('runs hcn run HARNESS --json FLAGS --prompt PROMPT, records the stream, exits with its code', async () => {
    const s = standIn();
    const out = scratch.make();
    const r = await runHansard(
      ['run', '--out', out, 'codex', '--model', 'gpt-5', '--hcn', s.hcn, '--', 'say', 'OK'],
      {
        cwd: ROOT,
        env: { ...process.env, STANDIN_FIXTURE: join(REAL, 'hcn-bare-codex.ndjson'), STANDIN_EXIT: '3' },
      },
    );
    expect(r.code).toBe(3);
    expect(s.argv()).toEqual(['run', 'codex', '--json', '--model', 'gpt-5', '--prompt', 'say OK']);
    expect(r.out).toBe(readFileSync(join(REAL, 'hcn-bare-codex.ndjson'), 'utf8'));
    expect(r.err).toContain('provenance: effort = "medium" (profile)');
    const dir = /recorded (\S+):/.exec(r.err)![1]!;
    const events = await sessionEvents(dir);
    expect(types(events, 'message').map((e) => e.text)).toEqual(['say OK']);
    const turn = types(events, 'turn.start')[0]!;
    expect(turn.context_message_ids).toEqual([types(events, 'message')[0]!.id]);
    expect(types(events, 'agent.output').map((e) => e.text)).toEqual(['OK']);
    expect(types(events, 'turn.end').map((e) => e.status)).toEqual(['completed']);
    expect(events[0]!.meta).toMatchObject({
      agent: 'codex',
      app: 'hansard run',
      hcn_flags: ['--json', '--model', '--prompt'],
    });
  });

  it('finds hcn on PATH; without one, exit 2 saying how to install it or pass --hcn', async () => {
    const s = standIn();
    const env = {
      PATH: `${s.dir}:${process.env.PATH}`,
      STANDIN_FIXTURE: join(REAL, 'hcn-bare-claude.ndjson'),
    };
    const ok = await runHansard(['run', '--out', scratch.make(), 'claude', '--', 'hi'], { cwd: ROOT, env });
    expect(ok.code).toBe(0);
    const missing = await runHansard(['run', 'claude', '--', 'hi'], {
      cwd: ROOT,
      env: { PATH: scratch.make() },
    });
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/hcn was not found on PATH: install hcn .* or pass --hcn/);
    const none = await runHansard(['run', 'claude'], { cwd: ROOT, env });
    expect([none.code, none.err]).toEqual([2, expect.stringContaining('no prompt: put it after --')]);
  });

  it('passes hcn stdout through byte for byte (a real child; a line that is not JSON is reported by number)', async () => {
    const s = standIn();
    const stream = Buffer.concat([
      readFileSync(join(REAL, 'hcn-bare-claude.ndjson')).subarray(0, 200),
      Buffer.from('\nnot json — ünïcode\r\n'),
      readFileSync(join(REAL, 'hcn-bare-claude.ndjson')).subarray(200),
    ]);
    const fixture = join(s.dir, 'stream.ndjson');
    writeFileSync(fixture, stream);
    const out = scratch.make();
    const p = hansardProcess(['run', '--hcn', s.hcn, '--out', out, 'claude', '--', 'say OK'], {
      env: { STANDIN_FIXTURE: fixture, STANDIN_EXIT: '0' },
    });
    expect(await p.exited).toBe(0);
    expect(p.out().equals(stream)).toBe(true);
    expect(p.err()).toMatch(
      /lines could not be read \(kept as notes, first: line \d+: line is not valid JSON\)/,
    );
  }, 30_000);

  it("a terminal's Ctrl-C (SIGINT to hansard's process group) reaches hcn once; its done killed is recorded", async () => {
    const s = standIn();
    const out = scratch.make();
    // hansard in a process group of its own, as a shell's foreground job is: the group gets the SIGINT
    const p = hansardProcess(['run', '--hcn', s.hcn, '--out', out, 'codex', '--', 'go'], {
      env: { STANDIN_FIXTURE: join(REAL, 'hcn-bare-codex.ndjson'), STANDIN_HANG: '2' },
      detached: true,
    });
    const started = Date.now();
    while (!p.out().toString().includes('"OK"') && Date.now() - started < 20_000)
      await new Promise((r) => setTimeout(r, 50));
    process.kill(-p.child.pid!, 'SIGINT');
    expect(await p.exited).toBe(130);
    expect(s.sigints()).toBe(1);
    const dir = /recorded (\S+):/.exec(p.err())![1]!;
    const events = await sessionEvents(dir);
    const end = types(events, 'turn.end');
    expect(end.map((e) => [e.status, (e.extra as Record<string, unknown>).hcn_cause])).toEqual([
      ['interrupted', 'killed'],
    ]);
  }, 30_000);

  it('forwards SIGTERM to hcn; the run killed mid-stream keeps what was seen, its turn interrupted', async () => {
    const s = standIn();
    const out = scratch.make();
    const p = hansardProcess(['run', '--hcn', s.hcn, '--out', out, 'codex', '--', 'go'], {
      env: { STANDIN_FIXTURE: join(REAL, 'hcn-bare-codex.ndjson'), STANDIN_HANG: '2' },
    });
    const started = Date.now();
    while (!p.out().toString().includes('"OK"') && Date.now() - started < 20_000)
      await new Promise((r) => setTimeout(r, 50));
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(128 + 15); // hcn died of the forwarded SIGTERM
    const dir = /recorded (\S+):/.exec(p.err())![1]!;
    const events = await sessionEvents(dir);
    expect(types(events, 'agent.output').map((e) => e.text)).toEqual(['OK']);
    expect(types(events, 'turn.end').map((e) => e.status)).toEqual(['interrupted']);
  }, 30_000);
});

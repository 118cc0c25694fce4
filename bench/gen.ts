/**
 * Generates a synthetic session for the benchmarks: `events` events over `writers` writers, written
 * with the real serializer, timestamps interleaved the way concurrent writers interleave.
 * Usage: tsx bench/gen.ts DIR EVENTS WRITERS
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type LogEvent, newId, serializeEvent } from '../lib/log/index.js';
import { formatTs } from '../lib/log/time.js';

export async function generateSession(root: string, events: number, writers: number): Promise<string> {
  const sid = newId('s');
  const dir = join(root, sid);
  mkdirSync(dir, { recursive: true });
  const perWriter = Math.ceil(events / writers);
  const t0 = Date.UTC(2026, 10, 1) * 1000;
  let written = 0;
  for (let i = 0; i < writers; i++) {
    const w = newId('w');
    const out = createWriteStream(join(dir, `${w}.jsonl`));
    const n = Math.min(perWriter, events - written);
    let buf: string[] = [];
    let turn = '';
    let action = '';
    for (let seq = 1; seq <= n; seq++) {
      // Each writer's clock advances ~1 ms per event with jitter, so writers interleave in the merge.
      const ts = formatTs(t0 + seq * 1000 + ((i * 7919 + seq * 104729) % 997));
      const base = { v: 3, sid, w, seq, ts, mono: seq / 1000, extra: {} };
      let ev: LogEvent;
      if (seq === 1) {
        ev = {
          ...base,
          id: w,
          type: 'writer.start',
          writer_id: w,
          meta: { agent: `bot-${i}`, app: null, hansard_version: '0.1.0', host: 'bench', pid: i },
          redacted: [],
        } as LogEvent;
      } else if (seq === n) {
        ev = { ...base, id: newId('e'), type: 'writer.end', reason: null } as LogEvent;
      } else {
        switch (seq % 5) {
          case 0:
            ev = {
              ...base,
              id: newId('m'),
              type: 'message',
              user_id: `person-${i % 5}`,
              text: `please look at item ${seq} of the queue`,
              client_ts: null,
              redacted: [],
            } as LogEvent;
            break;
          case 1:
            turn = newId('t');
            ev = {
              ...base,
              id: turn,
              type: 'turn.start',
              turn_id: turn,
              context_message_ids: null,
            } as LogEvent;
            break;
          case 2:
            action = newId('a');
            ev = {
              ...base,
              id: action,
              type: 'agent.action',
              turn_id: turn,
              tool: 'Bash',
              input: { command: `grep -n item${seq} src/queue.ts` },
              call_id: `toolu_${seq}`,
              caused_by: null,
              redacted: [],
            } as LogEvent;
            break;
          case 3:
            ev = {
              ...base,
              id: newId('e'),
              type: 'agent.action_result',
              action_id: action,
              status: 'ok',
              output: `src/queue.ts:${seq}: item${seq}`,
              error: null,
              exit_code: 0,
              redacted: [],
            } as LogEvent;
            break;
          default:
            ev = {
              ...base,
              id: newId('e'),
              type: 'agent.output',
              turn_id: turn,
              text: `Item ${seq} is handled in src/queue.ts.`,
              caused_by: null,
              redacted: [],
            } as LogEvent;
        }
      }
      buf.push(serializeEvent(ev));
      if (buf.length >= 2000) {
        if (!out.write(`${buf.join('\n')}\n`)) await new Promise<void>((r) => out.once('drain', () => r()));
        buf = [];
      }
    }
    if (buf.length) out.write(`${buf.join('\n')}\n`);
    await new Promise<void>((r) => out.end(r));
    written += n;
  }
  return dir;
}

if (process.argv[1]?.endsWith('gen.ts')) {
  const [dir, events, writers] = process.argv.slice(2);
  generateSession(dir ?? '/tmp/hansard-bench', Number(events ?? 100000), Number(writers ?? 64)).then((d) =>
    console.log(d),
  );
}

/**
 * The names the session page gives its writers (issue 14.3: the legend, the row chips, the segment
 * download links; docs/timeline.md "Writers"), as a reader would name them: a writer's `meta.agent`; else,
 * when every `participant.join` and `message` of its segment is by one person, that person (their
 * `display_name` from the segment's joins, else their user_id); else its `w_…` id. Two writers of one
 * name are told apart by a suffix (" 2", " 3", in writer order); two that only look alike, by their code points.
 *
 * Whose a writer's lines are needs its whole segment, not the page's part of it (a name must not change
 * from one page to the next), so `soloPeople` reads the segments of the writers without an agent (the
 * human side of a session, usually small) to the end, or until a second person shows; lines that do not
 * name a `user_id` are skipped without being parsed.
 */
import { parseLine } from '../../log/format/codec.js';
import { lookAlikes, nameForm } from '../../log/format/names.js';
import type { ReplaySegment } from '../../log/replay/replay.js';
import { oneLine } from './text.js';

/** The one person a writer's joins and messages are by. */
export interface WriterPerson {
  user_id: string;
  display_name: string | null;
}

const NL = 0x0a;
const NEEDLE = Buffer.from('"user_id"');

/**
 * For each of `ws` (writer ids of `segments`), the one person all its `participant.join` and `message`
 * events are by; a writer with none, or with two people or more, is absent. Reads those segments whole
 * (concurrently), each stopping at its second person.
 * @throws what a segment's read throws (the signal's reason once it aborts)
 */
export async function soloPeople(
  segments: readonly ReplaySegment[],
  ws: ReadonlySet<string>,
  signal?: AbortSignal,
): Promise<Map<string, WriterPerson>> {
  const out = new Map<string, WriterPerson>();
  await Promise.all(
    segments
      .filter((s) => ws.has(s.w))
      .map(async (seg) => {
        const one = await soloPersonOf(seg, signal);
        if (one) out.set(seg.w, one);
      }),
  );
  return out;
}

async function soloPersonOf(seg: ReplaySegment, signal?: AbortSignal): Promise<WriterPerson | null> {
  let person: WriterPerson | null = null;
  let many = false;
  const onLine = (line: Uint8Array) => {
    const p = parseLine(line, 0, 0, true);
    if (!p.ok || (p.event.type !== 'message' && p.event.type !== 'participant.join')) return;
    const who = p.event.obj.user_id;
    if (typeof who !== 'string' || who === '') return;
    if (person !== null && person.user_id !== who) {
      many = true;
      return;
    }
    const shown = p.event.obj.display_name;
    const display = typeof shown === 'string' && shown.trim() !== '' ? shown : null;
    person = { user_id: who, display_name: person?.display_name ?? display };
  };
  let carry: Buffer = Buffer.alloc(0);
  for await (const chunk of seg.open(undefined, signal)) {
    signal?.throwIfAborted();
    const buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : Buffer.from(chunk);
    let start = 0;
    for (let nl = buf.indexOf(NL); nl !== -1; nl = buf.indexOf(NL, start)) {
      const line = buf.subarray(start, nl);
      if (line.includes(NEEDLE)) onLine(line);
      start = nl + 1;
      if (many) return null;
    }
    carry = buf.subarray(start);
  }
  return person;
}

/**
 * Each writer's name (see the module doc), by writer id, in the order of `writers`: agent, else the solo
 * person's display name or user_id, else the id; each in NFC and cut to one line of 80 characters,
 * repeats suffixed (`José` and `Jose` + U+0301 are one name: the second is `José 2`). A name that looks
 * like another writer's without being it (`аlice` with a Cyrillic а beside `alice`, lib/log/format/names.ts
 * `lookAlikes`) gets the code points that set it apart: `аlice ≈ U+0430` (issue 25.6).
 */
export function writerNames(
  writers: ReadonlyArray<{ w: string; agent: string | null }>,
  people: ReadonlyMap<string, WriterPerson>,
): Map<string, string> {
  const names = new Map<string, string>();
  const used = new Set<string>();
  const bases = writers.map(({ w, agent }) => {
    const p = people.get(w);
    return oneLine(nameForm(agent || (p ? (p.display_name ?? p.user_id) : w)), 80);
  });
  const marks = lookAlikes(bases);
  writers.forEach(({ w }, i) => {
    const mark = marks.get(bases[i]!);
    const base = mark ? `${bases[i]} ≈ ${mark.apart}` : bases[i]!;
    let name = base;
    // an agent literally named "bot 2" beside two "bot"s makes the second "bot 3"
    for (let n = 2; used.has(name); n++) name = `${base} ${n}`;
    used.add(name);
    names.set(w, name);
  });
  return names;
}

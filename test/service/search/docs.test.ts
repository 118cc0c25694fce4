/**
 * What is searchable (issue 30 item 1, lib/service/search/docs.ts): the documents each kind of line makes,
 * from the seed's own example lines (seed 001) and lines shaped like them.
 */
import { describe, expect, it } from 'vitest';
import { docsOfEvent, fixText, recordOf, reportDocs } from '../../../lib/service/search/docs.js';
import { SEARCH_TEXT_MAX } from '../../../lib/store/search.js';

const SID = 's_01KZVVGRNR3D5V708Z4NPGG11H';
const W = 'w_01KZVVGRNRKM87Z6X6TXYQR7EX';
const env = (seq: number, id: string) =>
  `"v":3,"sid":"${SID}","w":"${W}","seq":${seq},"id":"${id}","ts":"2026-08-12T20:44:44.0${String(seq).padStart(4, '0')}Z","mono":0.1`;
/** The seed's message line (seed 001, second example line). */
const SEED_MESSAGE = `{${env(2, 'm_01KZVVGRNTBMSD610TK2GA9BFS').replace('.00002Z', '.090132Z')},"type":"message","user_id":"priya","text":"restart the payments worker","client_ts":null,"redacted":[]}`;

function docsOf(line: string, agent: string | null = 'support-bot') {
  const rec = recordOf(Buffer.from(line), 0);
  if (!rec) return null;
  return docsOfEvent(rec, { agent });
}

describe('docsOfEvent', () => {
  it('makes a message document with its person, its text and the terms of both', () => {
    const made = docsOf(SEED_MESSAGE);
    expect(made?.fixes).toEqual([]);
    expect(made?.docs).toEqual([
      expect.objectContaining({
        sid: SID,
        w: W,
        seq: 2,
        id: 'm_01KZVVGRNTBMSD610TK2GA9BFS',
        type: 'message',
        field: 'text',
        person: 'priya',
        agent: null,
        text: 'restart the payments worker',
        terms: 'restart the payments worker priya',
      }),
    ]);
    expect(made?.docs[0]?.at_us).toBeGreaterThan(0);
  });

  it('makes an action document of the tool and the one-line input the timeline shows', () => {
    const made = docsOf(
      `{${env(4, 'a_01KZVVGRNT05FRT0FDW3NQZ7Q7')},"type":"agent.action","turn_id":"t_1","tool":"Bash","input":{"command":"terraform apply\\n-auto-approve","timeout":5},"call_id":null,"caused_by":["m_01KZVVGRNTBMSD610TK2GA9BFS"],"redacted":[]}`,
    );
    expect(made?.docs[0]).toMatchObject({
      type: 'action',
      field: 'input',
      tool: 'Bash',
      agent: 'support-bot',
      cause: 'e:a_01KZVVGRNT05FRT0FDW3NQZ7Q7',
      text: 'terraform apply ⏎ -auto-approve',
      terms: 'terraform apply auto approve bash support bot',
    });
    expect(made?.causes).toEqual([
      { sid: SID, key: 'e:a_01KZVVGRNT05FRT0FDW3NQZ7Q7', message_id: 'm_01KZVVGRNTBMSD610TK2GA9BFS' },
    ]);
  });

  it('makes output and note documents; a correction is a document and a fix of its target', () => {
    expect(
      docsOf(
        `{${env(5, 'e_01KZVVGRNT05FRT0FDW3NQZ7Q8')},"type":"agent.output","turn_id":"t_1","text":"Worker restarted.","caused_by":[],"redacted":[]}`,
      )?.docs[0],
    ).toMatchObject({ type: 'output', agent: 'support-bot', cause: null, text: 'Worker restarted.' });
    // caused_by null: the turn's context says (its turn.start files the cause under t:<turn_id>).
    expect(
      docsOf(
        `{${env(14, 'e_01KZVVGRNT05FRT0FDW3NQZA7')},"type":"agent.output","turn_id":"t_9","text":"Done.","caused_by":null,"redacted":[]}`,
      )?.docs[0],
    ).toMatchObject({ cause: 't:t_9' });
    expect(
      docsOf(`{${env(15, 't_9')},"type":"turn.start","turn_id":"t_9","context_message_ids":["m_1","m_2"]}`),
    ).toEqual({
      docs: [],
      fixes: [],
      causes: [
        { sid: SID, key: 't:t_9', message_id: 'm_1' },
        { sid: SID, key: 't:t_9', message_id: 'm_2' },
      ],
    });
    expect(
      docsOf(
        `{${env(6, 'e_01KZVVGRNT05FRT0FDW3NQZ7Q9')},"type":"note","author":"ci","text":"deploy gate","redacted":[]}`,
      )?.docs[0],
    ).toMatchObject({ type: 'note', person: 'ci', text: 'deploy gate' });
    const fix = docsOf(
      `{${env(7, 'e_01KZVVGRNT05FRT0FDW3NQZA0')},"type":"correction","target_id":"m_01KZVVGRNTBMSD610TK2GA9BFS","field":"text","value":"restart the billing worker","reason":"typo","redacted":[]}`,
    );
    expect(fix?.docs[0]).toMatchObject({
      type: 'correction',
      field: 'value',
      text: 'restart the billing worker',
    });
    expect(fix?.fixes).toEqual([
      expect.objectContaining({
        target_id: 'm_01KZVVGRNTBMSD610TK2GA9BFS',
        field: 'text',
        text: 'restart the billing worker',
        terms: 'restart the billing worker',
        by: 'e_01KZVVGRNT05FRT0FDW3NQZA0',
        w: W,
        seq: 7,
      }),
    ]);
  });

  it('makes nothing of results, joins, turn bounds, unknown types, bad corrections and broken lines', () => {
    for (const line of [
      `{${env(8, 'e_01KZVVGRNT05FRT0FDW3NQZA1')},"type":"agent.action_result","action_id":"a_1","status":"ok","output":"secret file contents","error":null,"exit_code":0,"redacted":[]}`,
      `{${env(9, 'e_01KZVVGRNT05FRT0FDW3NQZA2')},"type":"participant.join","user_id":"priya","display_name":"Priya"}`,
      `{${env(10, 'e_01KZVVGRNT05FRT0FDW3NQZA3')},"type":"future.kind","text":"words"}`,
      `{${env(11, 'e_01KZVVGRNT05FRT0FDW3NQZA4')},"type":"message","user_id":"priya","text":5}`,
      `{${env(12, 'e_01KZVVGRNT05FRT0FDW3NQZA5')},"type":"correction","target_id":"m_1","field":"text","value":7,"reason":"","redacted":[]}`,
    ]) {
      expect(docsOf(line)).toEqual({ docs: [], fixes: [], causes: [] });
    }
    expect(docsOf('{"v":3,"sid":')).toBeNull();
    expect(recordOf(Buffer.from([0xff, 0xfe]), 0)).toBeNull();
  });

  it('escapes control characters and bounds the text', () => {
    const made = docsOf(
      `{${env(13, 'm_01KZVVGRNT05FRT0FDW3NQZA6')},"type":"message","user_id":"p","text":"a\\u0007b\\u202e ${'x'.repeat(SEARCH_TEXT_MAX)}","client_ts":null,"redacted":[]}`,
    );
    const text = made?.docs[0]?.text ?? '';
    expect(text.includes('\u0007') || text.includes('\u202e')).toBe(false);
    expect(text.length).toBeLessThanOrEqual(SEARCH_TEXT_MAX);
  });
});

describe('fixText and reportDocs', () => {
  it('reads an input correction as its summary and refuses a non-string text', () => {
    expect(fixText('input', { command: 'make test' })).toBe('make test');
    expect(fixText('text', 'ok')).toBe('ok');
    expect(fixText('text', null)).toBeNull();
  });

  it('makes a report document per note and work summary, linked to their rows', () => {
    const docs = reportDocs(
      SID,
      {
        tenant: 't',
        sid: SID,
        version: 2,
        dropped_events: 0,
        dropped_reports: 0,
        reports: [
          {
            state: 'working',
            note: '',
            events: [],
            events_dropped: 0,
            reported_at: '2026-12-07T10:00:00Z',
            reported_by: 'tok',
          },
          {
            state: 'blocked',
            note: 'waiting on the billing schema',
            events: [],
            events_dropped: 0,
            reported_at: '2026-12-07T11:00:00Z',
            reported_by: 'tok',
          },
        ],
      },
      [
        {
          id: 'wk_1',
          summary: 'migrating the billing tables',
          actor: 'codex',
          system: 'ci',
          started_at: '2026-12-07T09:00:00Z',
        } as never,
      ],
    );
    expect(docs.map((d) => [d.id, d.type, d.field, d.text, d.agent])).toEqual([
      ['d-1', 'report', 'note', 'waiting on the billing schema', null],
      ['wk_1', 'report', 'summary', 'migrating the billing tables', 'codex'],
    ]);
    expect(docs[0]?.terms).toBe('waiting on the billing schema blocked');
  });
});

/**
 * verify, inspect and attribution over real HTTP (issue 3, DESIGN §4): the same library functions the CLI
 * runs on a local directory, over the stored segments.
 */
import { appendFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  inspectSession,
  segmentSources,
  sessionDirSegments,
  ULID_SOURCE,
  verifySegments,
} from '../../lib/log/index.js';
import { expectError, request } from '../support/http.js';
import { readLocal, writeSession } from '../support/segments.js';
import { mint, useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

const srv = useServer({ tokens: { reader: ['read'] } });
const { tokens } = srv;

describe('GET /v1/sessions/{sid}/verify', () => {
  it('answers ok for a clean session and the same report as the library on the local directory', async () => {
    const seg = writeSession(srv.workDir);
    await upload(srv, srv.admin, seg);
    const a = await request(srv, 'GET', `/v1/sessions/${seg.sid}/verify`, { token: tokens.reader });
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ ok: true, problems: [] });
    expect(a.json).toEqual(await verifySegments(sessionDirSegments(seg.dir), seg.sid));
  });

  it('reports a torn line in the middle as truncated_line with its position, and ok false', async () => {
    const seg = writeSession(srv.workDir, { open: true });
    appendFileSync(seg.path, '{"v":3,"sid":"torn\n');
    const s2 = readLocal(seg);
    await upload(srv, srv.admin, s2);
    const a = await request(srv, 'GET', `/v1/sessions/${seg.sid}/verify`, { token: tokens.reader });
    expect(a.json.ok).toBe(false);
    const torn = a.json.problems.find((p: { code: string }) => p.code === 'truncated_line');
    expect(torn).toMatchObject({ severity: 'error', w: seg.w, line: 9 });
  });

  it('needs the read scope and answers 404 for an unknown session', async () => {
    const seg = writeSession(srv.workDir);
    await upload(srv, srv.admin, seg);
    const ingestOnly = await mint(srv, 'local', ['ingest']);
    expectError(
      srv,
      await request(srv, 'GET', `/v1/sessions/${seg.sid}/verify`, { token: ingestOnly }),
      403,
      'forbidden',
    );
    expectError(
      srv,
      await request(srv, 'GET', '/v1/sessions/s_01KZVVGRNR3D5V708Z4NPGG11Z/verify', { token: tokens.reader }),
      404,
      'not_found',
    );
  });
});

describe('GET /v1/sessions/{sid}/inspect', () => {
  it('summarizes writers, participants, turns, actions by tool, attribution and the verify summary', async () => {
    const seg = writeSession(srv.workDir, { agent: 'inspector' });
    await upload(srv, srv.admin, seg);
    const a = await request(srv, 'GET', `/v1/sessions/${seg.sid}/inspect`, { token: tokens.reader });
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({
      sid: seg.sid,
      events: 9,
      writers: [{ w: seg.w, agent: 'inspector', events: 9, ended: true }],
      participants: [{ user_id: 'priya', display_name: 'Priya', messages: 1 }],
      turns: { total: 1, by_status: { completed: 1 } },
      actions: { total: 1, failed: 0, by_tool: { bash: { calls: 1, failed: 0 } } },
      corrections: 0,
      attribution: { total: 2, by_basis: { recorded_context: 2 }, mean_confidence: 1 },
      verify: { ok: true, errors: 0 },
    });
    const segments = sessionDirSegments(seg.dir);
    const local = await inspectSession(segmentSources(segments), await verifySegments(segments, seg.sid));
    // The same summary as the library's of the directory, plus the server's section of agents' reports
    // (none here).
    expect(a.json).toEqual({ ...local, declared: null });
  });
});

describe('GET /v1/sessions/{sid}/attribution', () => {
  it('lists every action and output with its messages, basis and confidence', async () => {
    const seg = writeSession(srv.workDir);
    await upload(srv, srv.admin, seg);
    const a = await request(srv, 'GET', `/v1/sessions/${seg.sid}/attribution`, { token: tokens.reader });
    expect(a.status).toBe(200);
    const message = seg.lines.map((l) => JSON.parse(l.toString())).find((e) => e.type === 'message');
    expect(a.json.sid).toBe(seg.sid);
    expect(a.json.attributions).toHaveLength(2);
    for (const at of a.json.attributions) {
      expect(at).toMatchObject({ message_ids: [message.id], basis: 'recorded_context', confidence: 1 });
    }
    expect(a.json.attributions.map((x: { type: string }) => x.type)).toEqual([
      'agent.action',
      'agent.output',
    ]);
  });

  it('shows the attribution in the text replay', async () => {
    const seg = writeSession(srv.workDir);
    await upload(srv, srv.admin, seg);
    const a = await request(srv, 'GET', `/v1/sessions/${seg.sid}/replay?format=text`, {
      token: tokens.reader,
    });
    const action = a.text.split('\n').find((l) => l.includes('agent.action '))!;
    expect(action).toMatch(new RegExp(String.raw`\[← priya m_${ULID_SOURCE}: recorded_context 1\]$`));
  });
});

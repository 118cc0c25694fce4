import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/format/ids.js';
import { STATUS_RETENTION } from '../../lib/service/status/retention.js';
import type { StateStore } from '../../lib/store/index.js';
import { encodeStatus } from '../../lib/store/status-record.js';
import { type App, BACKENDS, useAppBackends } from '../support/app-backends.js';

const backends = useAppBackends('hansard-status-');

describe.each(BACKENDS)('status history on %s', (name) => {
  let apps: [App, App];
  let token: string;
  let state: StateStore;
  beforeAll(async () => {
    ({ apps, token, state } = await backends.open(name));
  });

  const call = async (
    app: App,
    method: string,
    path: string,
    body?: unknown,
    // biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
  ): Promise<{ status: number; json: any }> => {
    const res = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, json: await res.json() };
  };
  const report = (sid: string, body: unknown, app = apps[0]) =>
    call(app, 'POST', `/v1/sessions/${sid}/status`, body);
  const read = (sid: string) => call(apps[0], 'GET', `/v1/sessions/${sid}/status`);

  it('keeps every report of 24 sent at once through two apps, none lost', async () => {
    const sid = newId('s');
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        report(sid, { state: 'working', note: `agent ${i}` }, apps[i % 2]),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(24).fill(201));
    const s = await read(sid);
    expect(s.json.history).toHaveLength(24);
    expect(new Set(s.json.history.map((h: { note: string }) => h.note))).toEqual(
      new Set(Array.from({ length: 24 }, (_, i) => `agent ${i}`)),
    );
    expect((await state.getStatus('acme', sid))!.version).toBe(24);
  });

  const evidence = (i: number, ref = `t${i}`) => ({ type: 'file', ref, result: 'modified' });
  const events = (n: number, ref?: string) =>
    Array.from({ length: n }, (_, i) => ({
      kind: 'evidence',
      evidence: [0, 1, 2, 3].map((j) => evidence(i * 4 + j, ref)),
    }));

  it('keeps exactly 128 events; the 129th drops the oldest, and the record says so', async () => {
    const sid = newId('s');
    for (let i = 0; i < 32; i++)
      expect((await report(sid, { state: 'working', events: events(4) })).status).toBe(201);
    let s = await read(sid);
    expect(s.json.history.reduce((n: number, h: { events: unknown[] }) => n + h.events.length, 0)).toBe(128);
    expect(s.json.dropped_events).toBe(0);
    await report(sid, { state: 'blocked', note: 'waiting for review', events: events(1) });
    s = await read(sid);
    expect(s.json.history.reduce((n: number, h: { events: unknown[] }) => n + h.events.length, 0)).toBe(128);
    expect(s.json.dropped_events).toBe(1);
    expect(s.json.history[0]).toMatchObject({ events_dropped: 1 });
    expect(s.json.history[0].events).toHaveLength(3);
    expect(s.json).toMatchObject({ state: 'blocked', note: 'waiting for review', dropped_reports: 0 });
  });

  it('keeps the events within 128 KiB of JSON, dropping the oldest past it', async () => {
    const sid = newId('s');
    // Refs of 160 two-byte characters: about 1.4 KiB an event, so bytes bind before the count does.
    const big = () => events(4, 'é'.repeat(160));
    let s = await read(sid);
    for (let i = 0; i < 30; i++) await report(sid, { state: 'working', events: big() });
    s = await read(sid);
    expect(s.json.dropped_events).toBeGreaterThan(0);
    const kept = s.json.history.flatMap((h: { events: { evidence: object[] }[] }) =>
      h.events.map((e) => ({
        ...e,
        evidence: e.evidence.map((i) => ({ ...i, check: undefined })),
      })),
    );
    const bytes = kept.reduce((n: number, e: unknown) => n + Buffer.byteLength(JSON.stringify(e)), 0);
    expect(bytes).toBeLessThanOrEqual(STATUS_RETENTION.maxEventBytes);
    expect(bytes + Buffer.byteLength(JSON.stringify(kept[0]))).toBeGreaterThan(
      STATUS_RETENTION.maxEventBytes,
    );
    expect(kept.length + s.json.dropped_events).toBe(120);
  });

  it('keeps the whole record within 256 KiB, dropping the oldest reports', async () => {
    const sid = newId('s');
    // Notes of 240 characters, 236 of them three bytes in UTF-8: some 830 bytes a report, so about 315 fit.
    const note = '€'.repeat(236);
    for (let i = 0; i < 400; i++) {
      const a = await report(sid, { state: 'working', note: `${String(i).padStart(3, '0')} ${note}` });
      expect(a.status, JSON.stringify(a.json)).toBe(201);
    }
    const rec = (await state.getStatus('acme', sid))!;
    const bytes = Buffer.byteLength(encodeStatus(rec));
    expect(bytes).toBeLessThanOrEqual(STATUS_RETENTION.maxRecordBytes);
    expect(bytes).toBeGreaterThan(STATUS_RETENTION.maxRecordBytes - 1100);
    expect(rec.dropped_reports + rec.reports.length).toBe(400);
    const s = await read(sid);
    expect(s.json.dropped_reports).toBe(rec.dropped_reports);
    expect(s.json.note.startsWith('399 ')).toBe(true);
    expect(s.json.history[0].note.startsWith(String(rec.dropped_reports).padStart(3, '0'))).toBe(true);
  }, 120_000);
});

/**
 * The harness of the hostile-input suites (test/http/hostile-{json,chunks,urls,auth,http}.test.ts), one per
 * surface of docs/api.md "Hostile input": the real server of `hansard serve` (so Node's own limits and
 * timeouts apply: 431 for oversized headers, 400 for bytes that are not HTTP, 408 for a client that
 * stalls; timeouts shortened to 1 s / 1.5 s), a probe session that every refused case must leave alone,
 * and the runner of a table of cases.
 *
 * Each case is one row of a table: what is sent, the documented status (and error code where the app
 * answers), and whether anything may be stored. After every case the server still answers /healthz, and
 * for every refused case the tenant's segment files, its writer index, status, listing and tokens are
 * unchanged. Each case names the row of docs/api.md "Hostile input" it belongs to; each suite checks
 * that the documented status there is the one its cases assert, and that no row of its surfaces is left
 * without a case.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docRows } from './doc-rows.js';
import { type Answer, expectAlive, expectError, type RawAnswer, type Req, rawJson, request } from './http.js';
import { type LocalSegment, writeSession } from './segments.js';
import { type SuiteServer, useServer } from './server.js';
import { snapshot } from './stored.js';

/** A case of a hostile-input table. */
export interface HostileCase {
  name: string;
  /** the row of docs/api.md "Hostile input" this case belongs to */
  row: string;
  status: number;
  /** the error code of the JSON answer (absent: a success, or Node answered without a body) */
  code?: string;
  /** the input is accepted: stored data may change */
  accepted?: boolean;
  /** what the case needs stored first (not part of what must stay unchanged) */
  setup?: () => Promise<void>;
  run: () => Promise<Answer | RawAnswer>;
  check?: (a: Answer) => Promise<void> | void;
}

/**
 * The surfaces of docs/api.md "Hostile input" (the prefix of each row before `:`), and the suite that
 * runs their cases: a row of another prefix fails every suite's table check.
 */
export const HOSTILE_SURFACES: Record<string, string> = {
  'JSON body': 'hostile-json',
  status: 'hostile-json',
  work: 'hostile-work',
  chunk: 'hostile-chunks',
  path: 'hostile-urls',
  query: 'hostile-urls',
  auth: 'hostile-auth',
  HTTP: 'hostile-http',
};

/** The suite's real server (tenant `local`), the probe session, and requests as its admin. */
export interface HostileServer {
  srv: SuiteServer<'local', never>;
  /** the session and writer whose state every refused case must leave alone (filled in `beforeAll`) */
  probe: LocalSegment;
  /** tenant `local`'s admin token */
  admin: () => string;
  /** `POST …/chunks?offset=` of `body` to a writer, as the admin */
  chunkReq: (sid: string, w: string, offset: number | string, body: string | Uint8Array) => Req;
  /** a GET as the admin */
  get: (path: string) => Promise<Answer>;
  /** the `Host` and `Authorization` lines of a raw request as the admin */
  H: () => string;
}

/**
 * Starts the real server for a hostile suite (`useServer({ real: true, digester: false })`) and stores the probe: an open
 * segment uploaded whole, and a status report of its session. Afterwards checks that nothing was
 * polluted through `__proto__`, besides `useServer`'s check that the app logged nothing (no hostile input
 * made it fail, and nothing logged a token).
 */
export function useHostileServer(): HostileServer {
  // No digester: a scheduled digest is a file under <data>/tenants that no request wrote, and every
  // refused case compares those files before and after (a full suite at load crossed two: CI of ac7bed7).
  const srv = useServer({ real: true, digester: false });
  const probe = {} as LocalSegment;
  const admin = () => srv.admin;
  const chunkReq = (sid: string, w: string, offset: number | string, body: string | Uint8Array): Req => ({
    method: 'POST',
    path: `/v1/sessions/${sid}/writers/${w}/chunks?offset=${offset}`,
    token: admin(),
    body,
  });
  beforeAll(async () => {
    Object.assign(probe, writeSession(srv.workDir, { open: true }));
    const a = await request(srv, chunkReq(probe.sid, probe.w, 0, probe.bytes));
    expect(a.status, a.text).toBe(201);
    const st = await request(srv, {
      method: 'POST',
      path: `/v1/sessions/${probe.sid}/status`,
      token: admin(),
      json: { state: 'working', note: 'holding still' },
    });
    expect(st.status, st.text).toBe(201);
  });
  afterAll(() => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
  return {
    srv,
    probe,
    admin,
    chunkReq,
    get: (path) => request(srv, { method: 'GET', path, token: admin() }),
    H: () => `Host: 127.0.0.1\r\nAuthorization: Bearer ${admin()}\r\n`,
  };
}

/** JSON nested `n` deep: `[[[…]]]`. */
export const deep = (n: number): string => `${'['.repeat(n)}${']'.repeat(n)}`;

/**
 * Registers the suite `title`: one test per case (the documented status, the error envelope where the
 * app answers, the server still up, and nothing changed for a refused case), and a last test checking
 * the cases against docs/api.md "Hostile input" for the rows of `surfaces`.
 */
export function describeHostile(
  title: string,
  { srv, probe }: HostileServer,
  surfaces: string[],
  cases: HostileCase[],
): void {
  describe(title, () => {
    for (const c of cases) {
      it(`${c.name}: ${c.status}${c.code ? ` ${c.code}` : ''}${c.accepted ? ' (accepted)' : ''}`, async () => {
        await c.setup?.();
        const before = await snapshot(srv, srv.admin, probe);
        const a = await c.run();
        if ('headers' in a) {
          if (c.code) expectError(srv, a, c.status, c.code);
          else expect(a.status, a.text.slice(0, 500)).toBe(c.status);
          await c.check?.(a);
        } else {
          expect(a.status, a.received.slice(0, 500)).toBe(c.status);
          if (c.code) {
            const body = rawJson(a) as { error: { code: string; message: string; details: object } };
            expect(Object.keys(body)).toEqual(['error']);
            expect(body.error.code).toBe(c.code);
            expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'message']);
          }
        }
        await expectAlive(srv);
        if (!c.accepted) expect(await snapshot(srv, srv.admin, probe)).toEqual(before);
      });
    }

    it(`every case’s status is the one docs/api.md "Hostile input" gives for its row, and every ${surfaces.join('/')} row has a case`, () => {
      const rows = docRows(new URL('../../docs/api.md', import.meta.url), 'Hostile input');
      const surfaceOf = (row: string) => row.slice(0, row.indexOf(':'));
      // every row belongs to a surface some suite runs
      expect([...rows.keys()].filter((r) => !(surfaceOf(r) in HOSTILE_SURFACES))).toEqual([]);
      for (const c of cases) {
        const answer = rows.get(c.row);
        expect(answer, `docs/api.md has no Hostile input row "${c.row}"`).toBeDefined();
        expect(surfaces, c.name).toContain(surfaceOf(c.row));
        expect(answer!.includes(String(c.status)), `${c.name}: ${answer}`).toBe(true);
        if (c.code) expect(answer!.includes(`\`${c.code}\``), `${c.name}: ${answer}`).toBe(true);
      }
      // and no row of these surfaces is left without a case
      const used = new Set(cases.map((c) => c.row));
      const mine = [...rows.keys()].filter((r) => surfaces.includes(surfaceOf(r)));
      expect(mine.length).toBeGreaterThan(0);
      expect(mine.filter((r) => !used.has(r))).toEqual([]);
    });
  });
}

/**
 * Hostile HTTP against the real server of `hansard serve` (docs/api.md "Hostile input", the `HTTP:` rows),
 * over raw sockets, so Node's own limits and timeouts apply: 431 for oversized headers, 400 for bytes that
 * are not HTTP, 408 for a client that stalls (timeouts shortened to 1 s / 1.5 s here). Node answers these
 * without a JSON body, and closes. The harness is test/support/hostile-input.ts.
 */
import { expect } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { describeHostile, type HostileCase, useHostileServer } from '../support/hostile-input.js';
import { rawExchange } from '../support/http.js';

const hostile = useHostileServer();
const { srv, probe, admin, H } = hostile;

const CASES: HostileCase[] = [
  {
    name: 'a Content-Length larger than the body, then silence',
    row: 'HTTP: a Content-Length larger than the body, then silence',
    status: 408,
    run: async () => {
      const a = await rawExchange(
        srv.port,
        [
          `POST /v1/sessions/${probe.sid}/writers/${probe.w}/chunks?offset=${probe.bytes.length} HTTP/1.1\r\n${H()}Content-Type: application/x-ndjson\r\nContent-Length: 100000\r\n\r\n`,
          probe.lines[1]!,
        ],
        { gapMs: 50, waitMs: 10_000 },
      );
      expect(a.closed).toBe(true);
      expect(a.ms).toBeLessThan(8000);
      return a;
    },
  },
  {
    name: 'a Content-Length smaller than the body',
    row: 'HTTP: a Content-Length smaller than the body, both Content-Length and chunked, bad chunk framing, a NUL in a header, an unknown method, no Host',
    status: 400,
    run: async () => {
      const body = `{"state":"working","note":"the rest of this is not a request"}`;
      const a = await rawExchange(srv.port, [
        `POST /v1/sessions/${newId('s')}/status HTTP/1.1\r\n${H()}Content-Type: application/json\r\nContent-Length: 10\r\n\r\n${body}`,
      ]);
      expect(a.closed).toBe(true);
      return a;
    },
  },
  {
    name: 'both Content-Length and Transfer-Encoding: chunked',
    row: 'HTTP: a Content-Length smaller than the body, both Content-Length and chunked, bad chunk framing, a NUL in a header, an unknown method, no Host',
    status: 400,
    run: () =>
      rawExchange(srv.port, [
        `POST /v1/sessions/${newId('s')}/status HTTP/1.1\r\n${H()}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      ]),
  },
  {
    name: 'chunked framing with a chunk size that is not hex',
    row: 'HTTP: a Content-Length smaller than the body, both Content-Length and chunked, bad chunk framing, a NUL in a header, an unknown method, no Host',
    status: 400,
    run: () =>
      rawExchange(srv.port, [
        `POST /v1/sessions/${newId('s')}/status HTTP/1.1\r\n${H()}Transfer-Encoding: chunked\r\n\r\nZZ\r\n{"state":"done"}\r\n0\r\n\r\n`,
      ]),
  },
  {
    name: 'a NUL byte in a header value',
    row: 'HTTP: a Content-Length smaller than the body, both Content-Length and chunked, bad chunk framing, a NUL in a header, an unknown method, no Host',
    status: 400,
    run: () => rawExchange(srv.port, [`GET /v1/sessions HTTP/1.1\r\n${H()}X-Note: a\0b\r\n\r\n`]),
  },
  {
    name: 'an unknown method',
    row: 'HTTP: a Content-Length smaller than the body, both Content-Length and chunked, bad chunk framing, a NUL in a header, an unknown method, no Host',
    status: 400,
    run: () => rawExchange(srv.port, [`BREW /v1/sessions HTTP/1.1\r\n${H()}\r\n`]),
  },
  {
    name: 'an HTTP/1.1 request without Host',
    row: 'HTTP: a Content-Length smaller than the body, both Content-Length and chunked, bad chunk framing, a NUL in a header, an unknown method, no Host',
    status: 400,
    run: () =>
      rawExchange(srv.port, [`GET /v1/sessions HTTP/1.1\r\nAuthorization: Bearer ${admin()}\r\n\r\n`]),
  },
  {
    name: 'headers sent a byte every 100 ms',
    row: 'HTTP: headers sent slowly (slower than the headers timeout)',
    status: 408,
    run: async () => {
      const head = `GET /v1/sessions HTTP/1.1\r\n${H()}X-Slow: ${'s'.repeat(40)}\r\n\r\n`;
      const a = await rawExchange(srv.port, head.split(''), { gapMs: 100, waitMs: 12_000 });
      // sending it all would take over 10 s: the server closed the connection long before
      expect(a.closed).toBe(true);
      expect(a.ms).toBeLessThan(8000);
      return a;
    },
  },
  {
    name: 'a 64 KiB cookie',
    row: 'HTTP: headers over 16 KiB (a 64 KiB cookie, a 20 KiB URL)',
    status: 431,
    run: () =>
      rawExchange(srv.port, [
        `GET /v1/sessions HTTP/1.1\r\n${H()}Cookie: c=${'c'.repeat(64 * 1024)}\r\n\r\n`,
      ]),
  },
  {
    name: 'a 20 KiB URL',
    row: 'HTTP: headers over 16 KiB (a 64 KiB cookie, a 20 KiB URL)',
    status: 431,
    run: () => rawExchange(srv.port, [`GET /v1/sessions/s_${'A'.repeat(20 * 1024)} HTTP/1.1\r\n${H()}\r\n`]),
  },
];

describeHostile('hostile HTTP against the real server', hostile, ['HTTP'], CASES);

/** Usage slips a newcomer makes (issue 9.7): exit 2 before any request, saying what to pass instead. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../lib/client/cli/main.js';
import { openSession } from '../../../lib/log/index.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-upload-usage-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function upload(target: string) {
  let err = '';
  const code = await runCli(['upload', target], {
    stdout: { write: () => true },
    stderr: { write: (s: string) => (err += s) },
    // Nothing listens here: the refusal must come before any request.
    env: { HANSARD_URL: 'http://127.0.0.1:9', HANSARD_TOKEN: `hns_${'a'.repeat(43)}` },
    cwd: root,
  });
  return { code, err };
}

describe('hansard upload of a segment file', () => {
  it('exits 2 and names the session directory to pass instead', async () => {
    const s = openSession(root, { agent: 'bot' });
    s.end();
    const r = await upload(s.path);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `hansard: ${s.path} is a segment file: upload its session directory instead, which sends every writer's segment: hansard upload ${s.dir}\n`,
    );
  });

  it('still says "not a session directory" for another file', async () => {
    const r = await upload(join(root, 'missing', 'w_01KZVVGRNRKM87Z6X6TXYQR7EX.jsonl'));
    expect(r.code).toBe(2);
    expect(r.err).toContain('cannot read');
  });
});

describe('hansard token revoke given the token instead of its id', () => {
  it('exits 2 before any request and says revoke takes the tok_ id', async () => {
    let err = '';
    const code = await runCli(['token', 'revoke', `hns_${'b'.repeat(43)}`], {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (err += s) },
      env: { HANSARD_URL: 'http://127.0.0.1:9', HANSARD_TOKEN: `hns_${'a'.repeat(43)}` },
      cwd: root,
    });
    expect(code).toBe(2);
    expect(err).toBe(
      "hansard: revoke takes the token's id (tok_…, shown by hansard token list and when it was created), not the token itself\n",
    );
  });
});

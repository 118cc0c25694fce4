/**
 * test/fixtures/cases/03 (README there): a Claude Code transcript whose tool output prints five
 * credentials (an sk-proj- key, a provider key with a dot, a key with no vendor prefix, a tvly- key, a
 * database URL's password) and whose answer repeats one as `api_key: "…"`. Imported through the real
 * importer and writer: no value reaches the segment file, and each changed field is named in `redacted`
 * (issue 10, item 4).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importClaudeCodeTranscript } from '../../lib/importers/index.js';
import { decodeEvent, readSegmentFile } from '../../lib/log/index.js';

const FILE = 'test/fixtures/cases/03-redaction-dotted-unprefixed-keys.jsonl';
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The five values the transcript's tool output prints, read from the fixture's `.env` dump. */
function secretsOfFixture(): string[] {
  const env = readFileSync(FILE, 'utf8')
    .match(/OPENAI_API_KEY=[^"]*/)![0]
    .split('\\n');
  const values = env.map((l) => l.slice(l.indexOf('=') + 1));
  values[4] = values[4]!.match(/:\/\/app:([^@]+)@/)![1]!; // only the URL's password is a secret
  return values;
}

describe('case 03: dotted and unprefixed keys', () => {
  it('replaces all five values and the repeated one, and names each field in redacted', async () => {
    const out = mkdtempSync(join(tmpdir(), 'hansard-case03-'));
    dirs.push(out);
    const r = await importClaudeCodeTranscript(FILE, out);
    const secrets = secretsOfFixture();
    expect(secrets).toHaveLength(5);
    const name = readdirSync(r.dir).find((n) => n.endsWith('.jsonl'))!;
    const raw = readFileSync(join(r.dir, name), 'utf8');
    for (const s of secrets) expect(raw).not.toContain(s);

    const events: Record<string, unknown>[] = [];
    for await (const item of readSegmentFile(join(r.dir, name))) {
      if (item.kind === 'event') events.push(decodeEvent(item.event) as unknown as Record<string, unknown>);
    }
    const result = events.find((e) => e.type === 'agent.action_result')!;
    expect(result.redacted).toEqual(['output']);
    const output = JSON.stringify(result.output);
    expect(output.match(/\[REDACTED:[a-z_]+\]/g)).toHaveLength(5);
    expect(output).toContain('TAVILY_API_KEY=[REDACTED:tavily_key]');
    expect(output).toContain('postgres://app:[REDACTED:url_password]@db.internal');

    const answer = events.find((e) => e.type === 'agent.output')!;
    expect(answer.redacted).toEqual(['text']);
    expect(answer.text).toBe('Five keys are set; api_key: "[REDACTED:keyword_assignment]" is the Zhipu one.');
  });
});

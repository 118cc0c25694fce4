import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  decodeEvent,
  FIELD_ORDER,
  FREE_TEXT_FIELDS,
  HIDDEN_HOST,
  HIDDEN_PID,
  KNOWN_TYPES,
  MAX_FIELD_BYTES,
  openSession,
  parseLine,
  type RecordedEvent,
  readSegmentFile,
  redactEventFields,
  redactText,
  redactValue,
  serializeEvent,
  WriterError,
} from '../../lib/log/index.js';
import { KEYWORD_ASSIGNMENT, OWN_PATTERNS } from '../../lib/log/redact/redact-patterns.js';

// Every fake credential is assembled at run time, so this file holds nothing a secret scanner would flag.

/** Deterministic base62 text of length n (an LCG), with upper case, lower case and digits. */
function fake(n: number, seed = 7): string {
  const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let x = seed;
  let out = '';
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += abc[(x >>> 8) % abc.length];
  }
  return out;
}
const D5 = '-'.repeat(5);
const pemBlock = (kind: string, nl = '\n') =>
  [`${D5}BEGIN ${kind}${D5}`, fake(64, 1), fake(64, 2), `${fake(20, 3)}==`, `${D5}END ${kind}${D5}`].join(nl);

/** [pattern name, the text around it, the secret] — each realistic in shape, none real. */
const CASES: [string, string, string][] = [
  ['aws_access_key', 'export AWS_ACCESS_KEY_ID=%', `AKIA${'IOSFODNN7EXAMPLE'}`],
  ['aws_access_key', 'sts creds: %,', `ASIA${'Y34FZKBOKMUTVV7A'}`],
  ['aws_secret_key', 'aws_secret_access_key = %', `wJalrXUtnFEMI/K7MDENG/bPxRfiCY${'EXAMPLEKEY'}`],
  ['aws_secret_key', '{"AWS_SECRET_ACCESS_KEY": "%"}', `${fake(30, 4)}/+${fake(8, 5)}`],
  ['github_token', 'git clone https://x:@github.com using %', `ghp_${fake(36)}`],
  ['github_token', 'token=%', `gho_${fake(36, 2)}`],
  ['github_token', '%', `ghu_${fake(36, 3)}`],
  ['github_token', 'GITHUB_TOKEN: %', `ghs_${fake(36, 4)}`],
  ['github_token', '"%"', `ghr_${fake(76, 5)}`],
  ['github_pat', 'pat %\n', `github_pat_${fake(22)}_${fake(59, 9)}`],
  ['gitlab_token', 'PRIVATE-TOKEN: %', `glpat-${fake(20)}`],
  ['slack_token', 'SLACK_BOT_TOKEN=%', `xoxb-${'123456789012-1234567890123-'}${fake(24)}`],
  ['slack_token', 'user token %', `xoxp-${'1234567890-1234567890-1234567890-'}${fake(32)}`],
  ['stripe_key', 'stripe.api_key = "%"', `sk_live_${fake(24)}`],
  ['stripe_key', '%', `rk_live_${fake(99, 3)}`],
  ['google_api_key', 'maps?key=%&q=x', `AIza${fake(35)}`],
  ['openai_key', 'OPENAI_API_KEY=%', `sk-proj-${fake(60)}_${fake(40, 2)}-${fake(56, 3)}`],
  ['openai_key', 'OPENAI_API_KEY=%', `sk-${fake(48)}`],
  ['anthropic_key', 'x-api-key: %', `sk-ant-api03-${fake(93)}AA`],
  ['huggingface_token', 'HF_TOKEN=%', `hf_${'aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH'}`],
  ['npm_token', '//registry.npmjs.org/:_authToken=%', `npm_${fake(36)}`],
  ['hansard_token', 'HANSARD_TOKEN=%', `hns_${fake(43)}`],
  ['docker_pat', 'docker login -u me -p %', `dckr_pat_${fake(27)}`],
  ['keyword_assignment', '{"client_secret": "%"}', `${fake(30, 6)}7`],
  ['tavily_key', 'TAVILY_API_KEY=%', `tvly-${fake(32)}`],
  ['tavily_key', '%', `tvly-dev-${fake(32, 3)}`],
  ['keyword_assignment', 'ZHIPU_API_KEY=%', `${'50aaed'}${fake(26)}.${fake(10, 2)}`],
  ['keyword_assignment', 'config = { api_key: "%" }', `${fake(20, 5)}1`],
  [
    'jwt',
    'cookie: session=%; Path=/',
    `eyJ${'hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9'}.eyJ${'zdWIiOiIxMjM0NTY3ODkwIn0'}.${fake(43)}`,
  ],
  ['bearer_token', 'curl -H "Authorization: Bearer %" https://api.example.com', fake(40)],
  ['bearer_token', 'authorization: bearer %', 'abcdefgh.ijklmnop'],
  ['bearer_token', 'send it as bearer % please', `${fake(30)}9`],
  ['basic_auth', 'Authorization: Basic %', Buffer.from(`deploy:${fake(12)}`).toString('base64')],
  ['private_key', 'key:\n%\nend', pemBlock('RSA PRIVATE KEY')],
  ['private_key', '%', pemBlock('OPENSSH PRIVATE KEY')],
  ['private_key', '%', pemBlock('PRIVATE KEY')],
  ['private_key', '{"private_key": "%"}', pemBlock('PRIVATE KEY', '\\n')],
  ['private_key', 'pasted, no end: %', pemBlock('EC PRIVATE KEY').split(`\n${D5}END`)[0]!],
  ['url_password', 'DATABASE_URL=postgres://app:%@db.internal:5432/app', `S3cr3t${'Passw0rd'}`],
  ['url_password', 'remote: https://x-access-token:%@git.example.com/o/r.git', `${fake(20)}:x`],
];

describe('built-in patterns', () => {
  it.each(CASES)('%s: redacts the secret in %j', (name, around, secret) => {
    const { text, hits } = redactText(around.replace('%', secret));
    expect(text).toBe(around.replace('%', `[REDACTED:${name}]`));
    expect(hits).toEqual([name]);
  });

  it('covers every built-in pattern name with a case', () => {
    const covered = new Set(CASES.map((c) => c[0]));
    for (const p of [...OWN_PATTERNS, KEYWORD_ASSIGNMENT]) expect(covered).toContain(p.name);
  });

  it('documents each built-in with a name, a regex, keywords and a comment', () => {
    for (const p of [...OWN_PATTERNS, KEYWORD_ASSIGNMENT]) {
      expect(p.name).toMatch(/^[a-z0-9_]+$/);
      expect(p.regex).toBeInstanceOf(RegExp);
      expect(p.keywords?.length).toBeGreaterThan(0);
      expect(p.comment?.length).toBeGreaterThan(10);
    }
  });

  it('leaves near misses alone: words, short strings, ids, hashes, public keys', () => {
    const nearMisses = [
      '',
      'ok',
      'restart the payments worker',
      'the bearer of bad news',
      'Bearer token required',
      'AKIA',
      'AKIA1234',
      `AKIA${'IOSFODNN7EXAMPLE'}XYZ`, // too long for an access key id
      'ghp_short',
      'glpat-short',
      'sk-123',
      'sk-learn-compatible-estimators-are-great',
      'a task-management-system-design-document-v2 plan',
      'hf_hub_download',
      'npm_config_cache',
      'xoxb-not-a-real-token',
      'AIzaShort',
      'eyJhbGciOiJIUzI1NiJ9', // one segment is not a token
      '9fceb02d0ae598e95dc970b74767f19372d61af8', // a git commit sha
      'commit 9fceb02 (HEAD -> main)',
      `sha256:${'ab12'.repeat(16)}`,
      '01KZVVGRNR3D5V708Z4NPGG11H', // a ULID
      'm_01KZVVGRNTBMSD610TK2GA9BFS',
      '3f2504e0-4f89-11d3-9a0c-0305e82c3301', // a UUID
      `${fake(30, 4)}/+${fake(8, 5)}`, // secret-key shaped, but not labelled
      'https://example.com:8443/path?q=1#x',
      'git@github.com:org/repo.git',
      'mail priya@example.com',
      'postgres://app@db.internal/app',
      pemBlock('PUBLIC KEY'),
      pemBlock('CERTIFICATE'),
      'Authorization: Bearer $TOKEN',
      'hns_short',
    ];
    for (const s of nearMisses) expect(redactText(s), s).toEqual({ text: s, hits: [] });
  });

  it('merges overlapping matches into one placeholder named by the more specific pattern', () => {
    const jwt = `eyJ${fake(20)}.eyJ${fake(30, 2)}.${fake(43, 3)}`;
    expect(redactText(`Authorization: Bearer ${jwt}`)).toEqual({
      text: 'Authorization: Bearer [REDACTED:jwt]',
      hits: ['jwt'],
    });
    const hns = `hns_${fake(43)}`;
    expect(redactText(`Authorization: Bearer ${hns}`).text).toBe(
      'Authorization: Bearer [REDACTED:hansard_token]',
    );
  });

  it('replaces every match and lists each pattern once, in order of appearance', () => {
    const a = `AKIA${'IOSFODNN7EXAMPLE'}`;
    const g = `ghp_${fake(36)}`;
    const r = redactText(`${g} ${a} ${a} ${g}`);
    expect(r.text).toBe(
      '[REDACTED:github_token] [REDACTED:aws_access_key] [REDACTED:aws_access_key] [REDACTED:github_token]',
    );
    expect(r.hits).toEqual(['github_token', 'aws_access_key']);
  });

  it('is quick on text without secrets', () => {
    const prose = 'lorem ipsum dolor sit amet, see src/queue.ts:42 and https://example.com/x '.repeat(14_000);
    const t0 = performance.now();
    for (let i = 0; i < 5; i++) expect(redactText(prose).hits).toEqual([]);
    const small = 'restart the payments worker';
    for (let i = 0; i < 10_000; i++) redactText(small);
    // ~1 MiB five times plus 10k short strings: a few tens of ms here; the bound only catches a blow-up.
    expect(performance.now() - t0).toBeLessThan(1500);
  });

  it('stays linear on pathological input', () => {
    const headers = `${D5}BEGIN ${'RSA'} PRIVATE KEY${D5} `.repeat(30_000);
    const t0 = performance.now();
    redactText(headers);
    redactText(`a://${'b'.repeat(100)}:`.repeat(10_000));
    expect(performance.now() - t0).toBeLessThan(1500);
  });
});

describe('redactValue', () => {
  it('redacts strings at any depth, never keys, and copies only what changes', () => {
    const key = `AKIA${'IOSFODNN7EXAMPLE'}`;
    const untouched = { a: 1, b: ['x', null, true] };
    const input = { [key]: 'key names are kept', deep: [{ cmd: `aws --key ${key}` }], untouched };
    const before = structuredClone(input);
    const r = redactValue(input);
    expect(r.changed).toBe(true);
    expect(r.hits).toEqual(['aws_access_key']);
    expect(r.value).toEqual({
      [key]: 'key names are kept',
      deep: [{ cmd: 'aws --key [REDACTED:aws_access_key]' }],
      untouched,
    });
    expect((r.value as typeof input).untouched).toBe(untouched);
    expect(input).toEqual(before);
  });

  it('returns the same value when nothing is found', () => {
    const v = { a: ['b', { c: 'd' }], n: 3 };
    expect(redactValue(v)).toEqual({ value: v, changed: false, hits: [] });
    expect(redactValue(v).value).toBe(v);
    for (const p of [null, 3, true, 'plain'])
      expect(redactValue(p)).toEqual({ value: p, changed: false, hits: [] });
  });

  it('reads a value with its label-like key (env maps, header objects)', () => {
    const secret = `wJalrXUtnFEMI/K7MDENG/bPxRfiCY${'EXAMPLEKEY'}`;
    const token = 'abcdefghijklmnop';
    const r = redactValue({
      env: { AWS_SECRET_ACCESS_KEY: secret },
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(r.value).toEqual({
      env: { AWS_SECRET_ACCESS_KEY: '[REDACTED:aws_secret_key]' },
      headers: { Authorization: 'Bearer [REDACTED:bearer_token]' },
    });
  });

  it('follows toJSON and leaves a cycle alone', () => {
    const key = `AKIA${'IOSFODNN7EXAMPLE'}`;
    expect(redactValue({ when: { toJSON: () => `at ${key}` } }).value).toEqual({
      when: 'at [REDACTED:aws_access_key]',
    });
    const cyc: Record<string, unknown> = { s: 'plain' };
    cyc.self = cyc;
    expect(redactValue(cyc).value).toBe(cyc);
  });

  it('takes configured patterns, with a named group `secret` to keep the label', () => {
    const patterns = [
      { name: 'employee_id', regex: /EMP-\d{6}/ },
      { name: 'pin', regex: 'pin=(?<secret>\\d{4})' },
    ];
    expect(redactText('EMP-123456 with pin=1234', patterns)).toEqual({
      text: '[REDACTED:employee_id] with pin=[REDACTED:pin]',
      hits: ['employee_id', 'pin'],
    });
  });
});

describe('FREE_TEXT_FIELDS', () => {
  it('names a field of exactly the types that carry `redacted`, in field order', () => {
    const withRedacted = KNOWN_TYPES.filter((t) => FIELD_ORDER[t].includes('redacted'));
    expect(Object.keys(FREE_TEXT_FIELDS).sort()).toEqual([...withRedacted].sort());
    for (const [t, fields] of Object.entries(FREE_TEXT_FIELDS)) {
      const order = FIELD_ORDER[t as keyof typeof FIELD_ORDER];
      const idx = fields.map((f) => order.indexOf(f));
      expect(idx.every((i) => i >= 0)).toBe(true);
      expect(idx).toEqual([...idx].sort((a, b) => a - b));
    }
  });
});

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'hansard-redact-'));
});
afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

async function readEvents(path: string): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for await (const item of readSegmentFile(path)) {
    expect(item.kind).toBe('event');
    if (item.kind === 'event') out.push(item.event);
  }
  return out;
}

describe('the writer redacts free text before it writes', () => {
  const aws = `AKIA${'IOSFODNN7EXAMPLE'}`;
  const gh = `ghp_${fake(36)}`;

  it('replaces a secret in a message and names the field in redacted, on disk', async () => {
    const s = openSession(tmp, { host: 'demo-host', pid: 12345 });
    const m = s.message({ user_id: 'priya', text: `use ${aws} for the upload` });
    s.end();
    expect(m.text).toBe('use [REDACTED:aws_access_key] for the upload');
    expect(m.redacted).toEqual(['text']);
    const disk = readFileSync(s.path, 'utf8');
    expect(disk).not.toContain(aws);
    const [, msg] = await readEvents(s.path);
    expect(msg!.obj.text).toBe('use [REDACTED:aws_access_key] for the upload');
    expect(msg!.obj.redacted).toEqual(['text']);
    expect(serializeEvent(decodeEvent(msg!))).toBe(msg!.raw);
  });

  it('redacts inside a nested action input (keys untouched) and names ["input"]', async () => {
    const s = openSession(tmp);
    const t = s.turnStart();
    const input = { command: 'deploy', env: { GITHUB_TOKEN: gh, REGION: 'eu-west-1' }, args: ['--key', aws] };
    const a = s.action({ turn_id: t.turn_id, tool: 'Bash', input });
    s.end();
    expect(a.redacted).toEqual(['input']);
    expect(a.input).toEqual({
      command: 'deploy',
      env: { GITHUB_TOKEN: '[REDACTED:github_token]', REGION: 'eu-west-1' },
      args: ['--key', '[REDACTED:aws_access_key]'],
    });
    expect(input.env.GITHUB_TOKEN).toBe(gh); // the caller's object is not modified
    const events = await readEvents(s.path);
    expect(events[2]!.obj.redacted).toEqual(['input']);
    expect(readFileSync(s.path, 'utf8')).not.toContain(gh);
  });

  it('lists several changed fields once each, in field order', async () => {
    const s = openSession(tmp);
    const t = s.turnStart();
    const a = s.action({ turn_id: t.turn_id, tool: 'Bash', input: 'env' });
    const r = s.actionResult({
      action_id: a.id,
      status: 'error',
      output: { stdout: [`A=${aws}`, `B=${aws}`], stderr: '' },
      error: `auth failed for ${gh}`,
      exit_code: 1,
    });
    const c = s.correct({ target_id: a.id, field: 'input', value: { cmd: gh }, reason: `leaked ${aws}` });
    const o = s.output({ turn_id: t.turn_id, text: `found ${gh}` });
    const n = s.note({ author: 'priya', text: `rotate ${aws}` });
    s.end();
    expect(a.redacted).toEqual([]);
    expect(r.redacted).toEqual(['output', 'error']);
    expect(c.redacted).toEqual(['value', 'reason']);
    expect(o.redacted).toEqual(['text']);
    expect(n.redacted).toEqual(['text']);
    const disk = readFileSync(s.path, 'utf8');
    expect(disk).not.toContain(aws);
    expect(disk).not.toContain(gh);
  });

  it('redacts writer.start meta string values and names ["meta"]', async () => {
    const s = openSession(tmp, { agent: 'bot', extra: { cmdline: `run --token ${gh}`, port: 8080 } });
    s.end();
    const [start] = await readEvents(s.path);
    expect(start!.obj.redacted).toEqual(['meta']);
    expect((start!.obj.meta as Record<string, unknown>).cmdline).toBe('run --token [REDACTED:github_token]');
    expect((start!.obj.meta as Record<string, unknown>).port).toBe(8080);
  });

  it('runs configured patterns after the built-in ones', async () => {
    const s = openSession(
      tmp,
      {},
      { redact: { patterns: [{ name: 'ticket_secret', regex: /TS-[0-9a-f]{8}/ }] } },
    );
    const m = s.message({ user_id: 'priya', text: `TS-deadbeef and ${aws}` });
    s.end();
    expect(m.text).toBe('[REDACTED:ticket_secret] and [REDACTED:aws_access_key]');
    expect(m.redacted).toEqual(['text']);
  });

  it('refuses a bad configured pattern when the writer opens', () => {
    expect(() => openSession(tmp, {}, { redact: { patterns: [{ name: 'bad name', regex: /x/ }] } })).toThrow(
      WriterError,
    );
    expect(() => openSession(tmp, {}, { redact: { patterns: [{ name: 'p', regex: '(' }] } })).toThrow(
      WriterError,
    );
  });

  it('writes text as given when disabled', async () => {
    const s = openSession(tmp, {}, { redact: { disabled: true, patterns: [{ name: 'x', regex: /plain/ }] } });
    const m = s.message({ user_id: 'priya', text: `plain ${aws}` });
    s.end();
    expect(m.text).toBe(`plain ${aws}`);
    expect(m.redacted).toEqual([]);
    const [, msg] = await readEvents(s.path);
    expect(msg!.obj.text).toBe(`plain ${aws}`);
    expect(msg!.obj.redacted).toEqual([]);
  });

  it('redacts before the 1 MiB cut, so a cut never leaves part of a secret', async () => {
    const s = openSession(tmp);
    // without redaction first, the cut would fall in the middle of the key
    const pad = `${'x'.repeat(MAX_FIELD_BYTES - 2 - 10)} `;
    const m = s.message({ user_id: 'priya', text: `${pad}${aws}` });
    s.end();
    expect(m.redacted).toEqual(['text']);
    expect(m.truncated).toEqual(['text']);
    expect(m.text.startsWith(`${pad}[REDACTED`)).toBe(true);
    expect(readFileSync(s.path, 'utf8')).not.toContain('AKIA');
  });

  it('keeps the seed example shape: redacted [] when nothing is found, bytes round-trip', async () => {
    const seedLines = readFileSync(
      'test/fixtures/seed-session/s_01KZVVGRNR3D5V708Z4NPGG11H/w_01KZVVGRNRKM87Z6X6TXYQR7EX.jsonl',
      'utf8',
    )
      .split('\n')
      .filter(Boolean)
      .slice(0, 3);
    for (const l of seedLines) {
      const p = parseLine(Buffer.from(l), 1, 0);
      if (!p.ok) throw new Error(p.problem.message);
      const ev = decodeEvent(p.event) as unknown as Record<string, unknown>;
      const r = redactEventFields(ev.type as string, ev);
      expect(r.redacted).toEqual([]);
      expect(r.fields).toBe(ev);
    }
    const s = openSession(tmp, { agent: 'support-bot', host: 'demo-host', pid: 12345 });
    const m = s.message({ user_id: 'priya', text: 'restart the payments worker' });
    s.turnStart({ context_message_ids: [m.id] });
    s.end();
    const events = await readEvents(s.path);
    expect(events[0]!.raw).toContain('"type":"writer.start",');
    expect(events[0]!.raw).toMatch(
      // the seed's meta, then the writer's provenance (issue 24.1: an extra key, as meta allows)
      /"meta":\{"agent":"support-bot","app":null,"hansard_version":"[^"]+","host":"demo-host","pid":12345,"provenance":"library"\},"redacted":\[\]\}$/,
    );
    expect(events[1]!.raw).toMatch(
      /"text":"restart the payments worker","client_ts":null,"redacted":\[\]\}$/,
    );
    expect(events[2]!.raw).not.toContain('redacted');
    for (const e of events) expect(serializeEvent(decodeEvent(e))).toBe(e.raw);
  });

  it('hides host and pid behind placeholders when asked', async () => {
    const s = openSession(
      tmp,
      { host: 'build-7.corp.example', extra: { pid: 999 } },
      { redact: { hideHost: true, hidePid: true } },
    );
    s.end();
    const [start] = await readEvents(s.path);
    const meta = start!.obj.meta as Record<string, unknown>;
    expect(meta.host).toBe(HIDDEN_HOST);
    expect(meta.pid).toBe(HIDDEN_PID);
    expect(HIDDEN_HOST).toBe('redacted-host');
    expect(HIDDEN_PID).toBe(0);
    expect(Object.keys(meta)).toEqual(['agent', 'app', 'hansard_version', 'host', 'pid', 'provenance']);
    expect(start!.obj.redacted).toEqual([]);
    expect(readFileSync(s.path, 'utf8')).not.toContain('build-7');

    const plain = openSession(join(tmp, 'b'), {}, {});
    plain.end();
    const [start2] = await readEvents(plain.path);
    expect((start2!.obj.meta as Record<string, unknown>).pid).toBe(process.pid);
  });
});

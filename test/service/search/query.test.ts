/**
 * The search query language (issue 30 item 2, docs/search.md): what parses to what, and every refusal
 * says what was wrong and where.
 */
import { describe, expect, it } from 'vitest';
import { MAX_QUERY_CHARS, MAX_QUERY_TERMS } from '../../../lib/contract/search.js';
import { instantOf, parseQuery, toEngineQuery } from '../../../lib/service/search/query.js';
import { snippetOf } from '../../../lib/service/search/snippet.js';
import { termsColumn, termsOf } from '../../../lib/service/search/terms.js';
import { AppError } from '../../../lib/service/shared/errors.js';

const SID = 's_01JD0000000000000000000000';
const OTHER = 's_01JD0000000000000000000001';

function refusal(q: string): AppError {
  try {
    parseQuery(q);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('bad_query');
    expect((err as AppError).status).toBe(400);
    return err as AppError;
  }
  throw new Error(`"${q}" parsed`);
}

describe('terms', () => {
  it('cuts at everything but letters and digits, lower-cased in NFKC', () => {
    expect(termsOf('Run `terraform apply` on billing_migration/v2.sql')).toEqual([
      'run',
      'terraform',
      'apply',
      'on',
      'billing',
      'migration',
      'v2',
      'sql',
    ]);
    expect(termsOf('ＦＵＬＬ width Café')).toEqual(['full', 'width', 'café']);
    expect(termsOf('  --- !!! ')).toEqual([]);
  });

  it('cuts a run of letters at 64 characters and keeps duplicates (phrases need positions)', () => {
    expect(termsOf('a'.repeat(100))[0]).toHaveLength(64);
    expect(termsOf('go go go')).toEqual(['go', 'go', 'go']);
  });

  it('joins the parts of a document in order', () => {
    expect(termsColumn('Fix the parser', 'Bash', null, 'priya@example.com')).toBe(
      'fix the parser bash priya example com',
    );
  });
});

describe('parseQuery', () => {
  it('parses words, phrases, exclusions and filters', () => {
    const p = parseQuery(
      'billing "terraform apply" -draft -"old plan" agent:claude-code person:"Priya Shah" state:Needs-Review tool:Bash type:action session:' +
        SID,
    );
    expect(p.words).toEqual(['billing']);
    expect(p.phrases).toEqual(['terraform apply']);
    expect(p.excluded).toEqual(['draft', 'old plan']);
    expect(p.filters).toEqual({
      agent: ['claude-code'],
      person: ['Priya Shah'],
      state: ['needs_review'],
      tool: ['bash'],
      type: ['action'],
      session: [SID],
    });
  });

  it('takes a word that is several terms as a phrase', () => {
    const p = parseQuery('billing_migration');
    expect(p.phrases).toEqual(['billing_migration']);
    expect(toEngineQuery(p, { limit: 5, offset: 0 }, new Date(), null).match).toEqual([
      { terms: ['billing', 'migration'] },
    ]);
  });

  it('keeps URLs and Windows paths as text, not filters', () => {
    expect(parseQuery('https://example.com/x').phrases).toEqual(['https://example.com/x']);
  });

  it('allows filters alone, and several values of a key as alternatives', () => {
    const p = parseQuery('agent:codex agent:claude-code');
    expect(p.filters.agent).toEqual(['codex', 'claude-code']);
    expect(p.words).toEqual([]);
  });

  it.each([
    ['"unclosed phrase', 'a quote is not closed', 1],
    ['fix "a"b', 'closing quote', 8],
    ['foo:bar', '"foo:" is not a filter', 1],
    ['type:email', 'is not a type', 1],
    ['state:sleeping', 'is not a state', 1],
    ['session:abc', 'is not a session id', 1],
    ['after:yesterday', 'is not a date', 1],
    ['before:2026-02-30', 'is not a day of the calendar', 1],
    ['x -agent:codex', 'cannot be negated', 3],
    ['x after:1d after:2d', 'given twice', 12],
    ['-draft', 'exclusions alone', null],
    ['   ', 'nothing to search for', null],
    ['"!!!"', 'no letters or digits', 1],
    ['agent:', 'needs a value', 1],
    ['x tool: y', 'needs a value', 3],
  ])('refuses %j, saying %j at %j', (q, says, at) => {
    const err = refusal(q);
    expect(err.message).toContain(says);
    expect(err.message).toContain('docs/search.md');
    expect(err.details.position).toBe(at);
    expect(err.details.query).toBe(q);
  });

  it('bounds the length, the words and a filter’s values', () => {
    expect(refusal('a'.repeat(MAX_QUERY_CHARS + 1)).message).toContain(`${MAX_QUERY_CHARS} characters`);
    const many = Array.from({ length: MAX_QUERY_TERMS + 1 }, (_, i) => `w${i}`).join(' ');
    expect(refusal(many).message).toContain(`${MAX_QUERY_TERMS} words`);
    expect(refusal(Array.from({ length: 9 }, (_, i) => `agent:a${i}`).join(' ')).message).toContain(
      'at most 8 values',
    );
    expect(
      parseQuery(Array.from({ length: MAX_QUERY_TERMS }, (_, i) => `w${i}`).join(' ')).words,
    ).toHaveLength(MAX_QUERY_TERMS);
  });
});

describe('toEngineQuery', () => {
  const now = new Date('2026-12-07T12:00:00Z');

  it('turns dates into µs: a day from its start, a span back from now, an instant as it is', () => {
    expect(instantOf('2026-12-01', now)).toBe(Date.parse('2026-12-01T00:00:00Z') * 1000);
    expect(instantOf('7d', now)).toBe(Date.parse('2026-11-30T12:00:00Z') * 1000);
    expect(instantOf('90m', now)).toBe(Date.parse('2026-12-07T10:30:00Z') * 1000);
    expect(instantOf('2026-12-01T09:00:00.5Z', now)).toBe(Date.parse('2026-12-01T09:00:00.5Z') * 1000);
    const q = toEngineQuery(parseQuery('x after:2026-12-01 before:1h'), { limit: 3, offset: 6 }, now, null);
    expect(q.filters.after_us).toBe(Date.parse('2026-12-01T00:00:00Z') * 1000);
    expect(q.filters.before_us).toBe(Date.parse('2026-12-07T11:00:00Z') * 1000);
    expect([q.limit, q.offset]).toEqual([3, 6]);
  });

  it('refuses a range where after: is not before before:', () => {
    expect(() =>
      toEngineQuery(parseQuery('x after:2026-12-02 before:2026-12-01'), { limit: 1, offset: 0 }, now, null),
    ).toThrow(/is not before "before:2026-12-01"/);
    expect(() =>
      toEngineQuery(parseQuery('x after:1d before:2026-12-01'), { limit: 1, offset: 0 }, now, null),
    ).toThrow(AppError);
  });

  it('never lets a session-bound token widen its session', () => {
    const own = toEngineQuery(parseQuery('x'), { limit: 1, offset: 0 }, now, SID);
    expect(own.filters.sid).toEqual([SID]);
    const other = toEngineQuery(parseQuery(`x session:${OTHER}`), { limit: 1, offset: 0 }, now, SID);
    expect(other.filters.sid).toEqual([]);
    const both = toEngineQuery(
      parseQuery(`x session:${OTHER} session:${SID}`),
      { limit: 1, offset: 0 },
      now,
      SID,
    );
    expect(both.filters.sid).toEqual([SID]);
  });
});

describe('snippetOf', () => {
  it('marks the words of the query and keeps the text as written', () => {
    const parts = snippetOf('Ran Terraform apply on the billing stack', new Set(['terraform', 'billing']));
    expect(parts).toEqual([
      { text: 'Ran ', hit: false },
      { text: 'Terraform', hit: true },
      { text: ' apply on the ', hit: false },
      { text: 'billing', hit: true },
      { text: ' stack', hit: false },
    ]);
  });

  it('starts shortly before the first hit of a long text, and says where it cut', () => {
    const text = `${'lorem ipsum '.repeat(40)}the parser broke ${'dolor sit '.repeat(40)}`;
    const parts = snippetOf(text, new Set(['parser']));
    const joined = parts.map((p) => p.text).join('');
    expect(joined.startsWith('…')).toBe(true);
    expect(joined.endsWith('…')).toBe(true);
    expect(joined.length).toBeLessThanOrEqual(200 + 2);
    expect(parts.filter((p) => p.hit).map((p) => p.text)).toEqual(['parser']);
  });

  it('shows the start when nothing in the text matched (a name or a filter did)', () => {
    expect(snippetOf('line one\nline two', new Set(['priya']))).toEqual([
      { text: 'line one line two', hit: false },
    ]);
  });
});

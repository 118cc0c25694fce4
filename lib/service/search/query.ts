/**
 * The search query language (issue 30 item 2, docs/search.md): words and `"quoted phrases"` that must all
 * match, `-word` / `-"phrase"` that must not, and filters `key:value` (a value with spaces in quotes:
 * `person:"Priya Shah"`). Values of one key are alternatives (`agent:codex agent:claude-code`); different
 * keys must all hold. `after:` and `before:` take a UTC day (`2026-12-01`, the day's start), an RFC 3339
 * instant, or a span back from now (`7d`, `12h`, `30m`). Nothing else is syntax: `a OR b` is three words.
 *
 * Written here rather than with a query-parser package: the language is small, and what a package gives
 * (search-query-parser, liqe) would accept what this refuses (an unknown filter, an unclosed quote, a date
 * that is not one) without saying where, and the 400 must say what was wrong and at which character.
 */
import {
  MAX_FILTER_VALUES,
  MAX_QUERY_CHARS,
  MAX_QUERY_TERMS,
  SEARCH_DOC_TYPES,
  SEARCH_FILTER_KEYS,
  type SearchDocType,
  type SearchFilterKey,
} from '../../contract/search.js';
import { STATES } from '../../contract/status.js';
import { parseTs } from '../../log/format/time.js';
import type { EngineQuery } from '../../store/search.js';
import { AppError } from '../shared/errors.js';
import { termsOf } from './terms.js';

/** Most terms one phrase holds. */
export const MAX_PHRASE_TERMS = 16;

/** The states `state:` takes: the reported ones, and `unknown` (a lease that expired, no report). */
export const SEARCH_STATES = [...STATES, 'unknown'] as const;

/** A query as written, parsed: what `SearchAnswer.query` shows and `toEngineQuery` turns into terms. */
export interface ParsedQuery {
  words: string[];
  phrases: string[];
  /** `-word` and `-"phrase"`, as written (without the minus) */
  excluded: string[];
  filters: Partial<Record<SearchFilterKey, string[]>>;
}

/** One piece of the query: a word, a phrase or a filter, and the character it starts at (from 1). */
interface Piece {
  at: number;
  negated: boolean;
  key: string | null;
  value: string;
  quoted: boolean;
}

function bad(message: string, at: number | null, query: string): AppError {
  const where = at === null ? '' : ` (at character ${at})`;
  return new AppError('bad_query', `${message}${where}: see docs/search.md for the query language`, {
    position: at,
    query,
  });
}

/** The pieces of `q`, split at whitespace outside quotes. @throws AppError `bad_query` for an unclosed quote */
function pieces(q: string): Piece[] {
  const out: Piece[] = [];
  let i = 0;
  while (i < q.length) {
    while (i < q.length && /\s/.test(q[i] as string)) i++;
    if (i >= q.length) break;
    const at = i + 1;
    let negated = false;
    if (q[i] === '-' && i + 1 < q.length && !/\s/.test(q[i + 1] as string)) {
      negated = true;
      i++;
    }
    let key: string | null = null;
    const keyMatch = /^([A-Za-z_]{1,20}):/.exec(q.slice(i));
    const rest = keyMatch ? q.slice(i + keyMatch[0].length) : '';
    if (keyMatch && (rest === '' || /^\s/.test(rest))) {
      const k = (keyMatch[1] as string).toLowerCase();
      if ((SEARCH_FILTER_KEYS as readonly string[]).includes(k)) throw bad(`"${k}:" needs a value`, at, q);
    } else if (keyMatch && !rest.startsWith('//')) {
      key = (keyMatch[1] as string).toLowerCase();
      i += keyMatch[0].length;
    }
    if (q[i] === '"') {
      const close = q.indexOf('"', i + 1);
      if (close === -1) throw bad('a quote is not closed', i + 1, q);
      out.push({ at, negated, key, value: q.slice(i + 1, close), quoted: true });
      i = close + 1;
      if (i < q.length && !/\s/.test(q[i] as string)) {
        throw bad('a closing quote must be followed by a space or the end', i + 1, q);
      }
    } else {
      let j = i;
      while (j < q.length && !/\s/.test(q[j] as string)) j++;
      const value = q.slice(i, j);
      if (value.includes('"')) throw bad('a quote inside a word: put the whole phrase in quotes', at, q);
      out.push({ at, negated, key, value, quoted: false });
      i = j;
    }
  }
  return out;
}

const FILTER_HINT = SEARCH_FILTER_KEYS.map((k) => `${k}:`).join(' ');

/**
 * Parses `q` (docs/search.md).
 * @throws AppError `bad_query` (400) naming what is wrong and where: an empty or over-long query, an
 *   unclosed quote, an unknown filter key, a filter value of the wrong form (a type, state, session id or
 *   date that is not one), more than `MAX_QUERY_TERMS` words and phrases or `MAX_FILTER_VALUES` values of
 *   a key, a negated filter, or a query of exclusions alone
 */
export function parseQuery(q: string): ParsedQuery {
  if (q.length > MAX_QUERY_CHARS) throw bad(`a query holds at most ${MAX_QUERY_CHARS} characters`, null, q);
  const parsed: ParsedQuery = { words: [], phrases: [], excluded: [], filters: {} };
  let terms = 0;
  for (const p of pieces(q)) {
    if (p.key !== null) {
      if (!(SEARCH_FILTER_KEYS as readonly string[]).includes(p.key)) {
        throw bad(
          `"${p.key}:" is not a filter (the filters are ${FILTER_HINT}); to search for the text, put it in quotes`,
          p.at,
          q,
        );
      }
      if (p.negated) throw bad(`a filter cannot be negated ("-${p.key}:")`, p.at, q);
      const key = p.key as SearchFilterKey;
      const value = checkFilter(key, p.value.trim(), p.at, q);
      const list = parsed.filters[key] ?? [];
      if (key === 'after' || key === 'before') {
        if (list.length > 0) throw bad(`"${key}:" is given twice`, p.at, q);
      } else if (list.length >= MAX_FILTER_VALUES) {
        throw bad(`"${key}:" takes at most ${MAX_FILTER_VALUES} values`, p.at, q);
      }
      if (!list.includes(value)) list.push(value);
      parsed.filters[key] = list;
      continue;
    }
    const n = termsOf(p.value).length;
    if (n === 0) {
      // Punctuation alone (`-`, `"..."`): nothing to match, and saying so beats matching everything.
      if (p.quoted || p.negated) throw bad('a phrase or exclusion with no letters or digits', p.at, q);
      continue;
    }
    if (n > MAX_PHRASE_TERMS) throw bad(`a phrase holds at most ${MAX_PHRASE_TERMS} words`, p.at, q);
    if (++terms > MAX_QUERY_TERMS)
      throw bad(`a query holds at most ${MAX_QUERY_TERMS} words and phrases`, p.at, q);
    if (p.negated) parsed.excluded.push(p.value);
    else if (p.quoted || n > 1) parsed.phrases.push(p.value);
    else parsed.words.push(p.value);
  }
  const positive = parsed.words.length + parsed.phrases.length + Object.keys(parsed.filters).length;
  if (positive === 0) {
    throw bad(
      parsed.excluded.length > 0
        ? 'a query of exclusions alone matches everything: add a word, a phrase or a filter'
        : 'the query has nothing to search for: give words, "a phrase" or filters such as agent:codex',
      null,
      q,
    );
  }
  return parsed;
}

const SPAN = /^(\d{1,4})([dhm])$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A filter's value checked for its key, as kept (lower-cased where the key matches case-insensitively). */
function checkFilter(key: SearchFilterKey, value: string, at: number, q: string): string {
  if (!value) throw bad(`"${key}:" needs a value`, at, q);
  if (value.length > 200) throw bad(`a filter value holds at most 200 characters`, at, q);
  switch (key) {
    case 'type':
      if (!(SEARCH_DOC_TYPES as readonly string[]).includes(value.toLowerCase())) {
        throw bad(`"type:${value}" is not a type (one of ${SEARCH_DOC_TYPES.join(', ')})`, at, q);
      }
      return value.toLowerCase();
    case 'state': {
      const v = value.toLowerCase().replace(/-/g, '_');
      if (!(SEARCH_STATES as readonly string[]).includes(v)) {
        throw bad(`"state:${value}" is not a state (one of ${SEARCH_STATES.join(', ')})`, at, q);
      }
      return v;
    }
    case 'session':
      if (!/^s_[0-9A-HJKMNP-TV-Z]{26}$/.test(value)) {
        throw bad(`"session:${value}" is not a session id (s_ followed by a ULID)`, at, q);
      }
      return value;
    case 'tool':
      return value.toLowerCase();
    case 'after':
    case 'before':
      if (!SPAN.test(value) && !DAY.test(value) && parseTs(value) === null) {
        throw bad(
          `"${key}:${value}" is not a date: give a UTC day (2026-12-01), an instant (2026-12-01T09:00:00Z) or a span back from now (7d, 12h, 30m)`,
          at,
          q,
        );
      }
      if (DAY.test(value) && parseTs(`${value}T00:00:00Z`) === null) {
        throw bad(`"${key}:${value}" is not a day of the calendar`, at, q);
      }
      return value;
    default:
      return value;
  }
}

/** µs since the epoch of an `after:`/`before:` value at `now` (checked by `parseQuery`). */
export function instantOf(value: string, now: Date): number {
  const span = SPAN.exec(value);
  if (span) {
    const unit = { d: 86_400, h: 3_600, m: 60 }[span[2] as 'd' | 'h' | 'm'];
    return (now.getTime() - Number(span[1]) * unit * 1000) * 1000;
  }
  const ts = parseTs(DAY.test(value) ? `${value}T00:00:00Z` : value);
  if (!ts) throw new AppError('bad_query', `"${value}" is not a date`);
  return ts.micros;
}

/**
 * The engine's form of a parsed query: words and phrases as terms (`termsOf`, so a word that is several
 * terms, `billing_migration`, is a phrase of them), the filters with dates as µs, and the page.
 * `restrictSid` (a session-bound token) is a filter no query can widen: with a `session:` filter of another
 * session, nothing matches.
 * @throws AppError `bad_query` when `after:` is not before `before:` (nothing could match)
 */
export function toEngineQuery(
  p: ParsedQuery,
  page: { limit: number; offset: number },
  now: Date,
  restrictSid: string | null,
): EngineQuery {
  const f = p.filters;
  const filters: EngineQuery['filters'] = {};
  if (f.agent) filters.agent = f.agent;
  if (f.person) filters.person = f.person;
  if (f.state) filters.state = f.state;
  if (f.tool) filters.tool = f.tool;
  if (f.type) filters.type = f.type as SearchDocType[];
  if (restrictSid !== null) {
    filters.sid = f.session && !f.session.includes(restrictSid) ? [] : [restrictSid];
  } else if (f.session) {
    filters.sid = f.session;
  }
  if (f.after?.[0]) filters.after_us = instantOf(f.after[0], now);
  if (f.before?.[0]) filters.before_us = instantOf(f.before[0], now);
  if (
    filters.after_us !== undefined &&
    filters.before_us !== undefined &&
    filters.after_us >= filters.before_us
  ) {
    throw new AppError(
      'bad_query',
      `"after:${f.after?.[0]}" is not before "before:${f.before?.[0]}": nothing can be in that range (see docs/search.md)`,
      { position: null, query: null },
    );
  }
  return {
    match: [...p.words, ...p.phrases].map((t) => ({ terms: termsOf(t) })),
    exclude: p.excluded.map((t) => ({ terms: termsOf(t) })),
    filters,
    limit: page.limit,
    offset: page.offset,
  };
}

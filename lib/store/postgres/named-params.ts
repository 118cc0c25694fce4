/**
 * Named parameters (`:name`, the RDS Data API's form, in which the search adapter's SQL is written) turned
 * into PostgreSQL's positional ones (`$1…`) for `pg` (lib/store/postgres/pg-runner.ts, issue 30 item 4).
 * What is not a parameter is left alone: casts (`::jsonb`), string literals (`'a:b'`, `E'\':x'`),
 * quoted identifiers (`"a:b"`), dollar-quoted bodies (`$$ … :x … $$`) and comments.
 */
import type { SqlParams, SqlValue } from './runner.js';

/** A statement in positional form, and the parameter names in `$n` order. */
export interface PositionalSql {
  text: string;
  names: string[];
}

const cache = new Map<string, PositionalSql>();

/**
 * `sql` with each `:name` replaced by `$n` (one number per distinct name).
 * @example toPositional("SELECT :a::int, ':b', :a") → { text: "SELECT $1::int, ':b', $1", names: ['a'] }
 */
export function toPositional(sql: string): PositionalSql {
  const hit = cache.get(sql);
  if (hit) return hit;
  const names: string[] = [];
  let out = '';
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i] as string;
    const next = sql[i + 1];
    if (c === "'") {
      // A string literal: '' is a quote inside it; an E'…' string also escapes with a backslash.
      const escapes = i > 0 && /[eE]/.test(sql[i - 1] as string) && !/\w/.test(sql[i - 2] ?? ' ');
      let j = i + 1;
      while (j < n) {
        if (escapes && sql[j] === '\\') j += 2;
        else if (sql[j] === "'" && sql[j + 1] === "'") j += 2;
        else if (sql[j] === "'") break;
        else j++;
      }
      out += sql.slice(i, j + 1);
      i = j + 1;
    } else if (c === '"') {
      const j = sql.indexOf('"', i + 1);
      const end = j === -1 ? n : j + 1;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '-' && next === '-') {
      const j = sql.indexOf('\n', i);
      const end = j === -1 ? n : j;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '/' && next === '*') {
      const j = sql.indexOf('*/', i + 2);
      const end = j === -1 ? n : j + 2;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '$' && /[A-Za-z_$]/.test(next ?? '') && !/\w/.test(sql[i - 1] ?? ' ')) {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
      if (tag) {
        const j = sql.indexOf(tag[0], i + tag[0].length);
        const end = j === -1 ? n : j + tag[0].length;
        out += sql.slice(i, end);
        i = end;
      } else {
        out += c;
        i++;
      }
    } else if (c === ':' && next === ':') {
      out += '::';
      i += 2;
    } else if (c === ':' && /[A-Za-z_]/.test(next ?? '')) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1))?.[0] as string;
      let k = names.indexOf(name);
      if (k === -1) k = names.push(name) - 1;
      out += `$${k + 1}`;
      i += 1 + name.length;
    } else {
      out += c;
      i++;
    }
  }
  const done = { text: out, names };
  if (cache.size < 1000) cache.set(sql, done);
  return done;
}

/**
 * The values of `params` in the order of `names`.
 * @throws Error naming a parameter the statement uses and `params` lacks (a typo is not a NULL)
 */
export function positionalValues(names: string[], params: SqlParams = {}): SqlValue[] {
  return names.map((name) => {
    if (!Object.hasOwn(params, name)) throw new Error(`the statement uses :${name}, which is not given`);
    return params[name] as SqlValue;
  });
}

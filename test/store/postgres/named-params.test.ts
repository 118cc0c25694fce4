/**
 * `:name` parameters to `$n` (lib/store/postgres/named-params.ts), as `PgRunner` sends the search adapter's
 * SQL to PostgreSQL: what is a parameter and what only looks like one.
 */
import { describe, expect, it } from 'vitest';
import { positionalValues, toPositional } from '../../../lib/store/postgres/named-params.js';

describe('toPositional', () => {
  it('numbers each distinct name once, in order of first use', () => {
    expect(toPositional('SELECT :a, :b_2, :a WHERE x = :B')).toEqual({
      text: 'SELECT $1, $2, $1 WHERE x = $3',
      names: ['a', 'b_2', 'B'],
    });
  });

  it('leaves casts, string literals, quoted identifiers, dollar quotes and comments alone', () => {
    const sql = [
      "SELECT :v::jsonb, CAST(:w AS int), 'a :x '' :y', E'\\' :z', \"col:q\"",
      '$$ :in_body $$, $tag$ :t $tag$, $1',
      '-- :commented',
      '/* :block */ :last',
    ].join('\n');
    const { text, names } = toPositional(sql);
    expect(names).toEqual(['v', 'w', 'last']);
    expect(text).toBe(
      [
        "SELECT $1::jsonb, CAST($2 AS int), 'a :x '' :y', E'\\' :z', \"col:q\"",
        '$$ :in_body $$, $tag$ :t $tag$, $1',
        '-- :commented',
        '/* :block */ $3',
      ].join('\n'),
    );
  });

  it('takes a colon not followed by a name as text (array slices, time literals in strings)', () => {
    expect(toPositional('SELECT a[1:2], :n').text).toBe('SELECT a[1:2], $1');
  });
});

describe('positionalValues', () => {
  it('orders the values by the names and refuses a name that is not given', () => {
    expect(positionalValues(['b', 'a'], { a: 1, b: null, c: 'unused' })).toEqual([null, 1]);
    expect(() => positionalValues(['missing'], {})).toThrow(/:missing, which is not given/);
  });
});

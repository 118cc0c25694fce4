/**
 * Names as a reader tells them apart (issue 25.6, docs/board.md "no name can pass for another"): an agent
 * name or a `user_id` is whatever a writer recorded, and two names can be different code points yet the
 * same to the eye.
 *
 * - Canonically equivalent names are one name: `José` precomposed (U+00E9) and `Jose` + U+0301 are the
 *   same characters to Unicode and to a reader, so the board keeps, lists, filters and links a name in
 *   its NFC form (`nameForm`), and two writers of `José` are one agent.
 * - Names that are different characters but render alike (Latin `alice` and `аlice` with a Cyrillic
 *   U+0430, `paypal` and `paypa1`, a name with an invisible character in it) stay different names, and
 *   `lookAlikes` says which of a page's names have such a twin, and by which code points each differs,
 *   so the page can mark them visibly. Two names look alike when their UTS #39 skeletons agree:
 *   lib/log/format/text-normal.ts's `normalText` (invisible code points dropped, NFKC, non-ASCII confusables
 *   folded to ASCII), then `unhomoglyph` (confusables.txt) over every character, ASCII ones included
 *   (`l`/`I`/`1`, `rn`/`m`, `O`/`0`), then NFD.
 */
import unhomoglyph from 'unhomoglyph';
import { normalText } from './text-normal.js';

const ASCII_ONLY = /^[\0-\x7f]*$/;

/**
 * `name` in NFC, the form the board keeps and compares names in (ASCII is returned as it is, without
 * asking ICU). Never throws: lone surrogates are left as they are.
 * @example nameForm('Jose\u0301') === 'Jos\u00e9'
 */
export function nameForm(name: string): string {
  return ASCII_ONLY.test(name) ? name : name.normalize('NFC');
}

/** `names` in their NFC forms, each once, in the order first seen. */
export function uniqueNames(names: Iterable<string>): string[] {
  return [...new Set(Array.from(names, nameForm))];
}

/** Whether `a` and `b` are one name (equal in NFC). */
export function sameName(a: string, b: string): boolean {
  return a === b || nameForm(a) === nameForm(b);
}

/** The UTS #39 skeleton of `name` (see the module's doc): equal for names that render alike. */
export function nameSkeleton(name: string): string {
  return unhomoglyph(normalText(name)).normalize('NFD');
}

/** How a name that looks like another is told apart from it. */
export interface LookAlike {
  /**
   * The code points that set it apart from the names it looks like (those some of them do not have),
   * as `U+0430`, space-separated; every code point when none does (the same characters in another
   * order). At most 4, then `…`.
   */
  apart: string;
  /** All its code points (`U+0061 U+006C …`, at most 64, then `…`): for a title to hover. */
  codePoints: string;
}

/** `U+0430` for a code point. */
function hex(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** At most `max` items joined by spaces, `…` after when there were more. */
function listed(items: string[], max: number): string {
  return items.length > max ? `${items.slice(0, max).join(' ')} …` : items.join(' ');
}

/** The NFC form and skeleton of names seen so far: names repeat on every page; bounded so no stream of names grows it. */
const SEEN = new Map<string, { form: string; skeleton: string }>();
const SEEN_MAX = 10_000;

function seen(name: string): { form: string; skeleton: string } {
  let s = SEEN.get(name);
  if (s === undefined) {
    if (SEEN.size >= SEEN_MAX) SEEN.clear();
    const form = nameForm(name);
    s = { form, skeleton: nameSkeleton(form) };
    SEEN.set(name, s);
  }
  return s;
}

/**
 * Which of `names` look like another of them without being the same name (their skeletons agree, their
 * NFC forms do not), each with what tells it apart; names with no twin are not in the map. Keys are the
 * names as given (several spellings of one name each get the entry of that name). Cost: a skeleton per
 * distinct name (cached), so a page's few hundred names take well under a millisecond once seen.
 * @example lookAlikes(['alice', '\u0430lice', 'bob']).get('\u0430lice')?.apart // 'U+0430'
 */
export function lookAlikes(names: Iterable<string>): Map<string, LookAlike> {
  const bySkeleton = new Map<string, Set<string>>();
  const given = new Map<string, string[]>();
  for (const name of names) {
    const { form, skeleton } = seen(name);
    const spellings = given.get(form);
    if (spellings) {
      if (!spellings.includes(name)) spellings.push(name);
      continue;
    }
    given.set(form, [name]);
    const group = bySkeleton.get(skeleton);
    if (group) group.add(form);
    else bySkeleton.set(skeleton, new Set([form]));
  }
  const out = new Map<string, LookAlike>();
  for (const group of bySkeleton.values()) {
    if (group.size < 2) continue;
    const forms = [...group];
    const sets = forms.map((f) => new Set(Array.from(f, (ch) => ch.codePointAt(0)!)));
    forms.forEach((form, i) => {
      const points = Array.from(form, (ch) => ch.codePointAt(0)!);
      const own = [...new Set(points)].filter((cp) => sets.some((other, j) => j !== i && !other.has(cp)));
      const mark: LookAlike = {
        apart: listed((own.length > 0 ? own : points).map(hex), 4),
        codePoints: listed(points.map(hex), 64),
      };
      for (const spelling of given.get(form)!) out.set(spelling, mark);
    });
  }
  return out;
}

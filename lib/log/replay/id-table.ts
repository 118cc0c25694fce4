/**
 * Interned ids for the replay's long-lived state (issue 16, "peak RSS flat"): the attribution's messages,
 * turns and actions and the corrections' targets are kept as small numbers into an `IdTable`, and their
 * facts in `Int32Column`s indexed by that number, instead of strings in Maps and an object each. An id
 * is one entry in 1 MiB pages: a ULID-shaped id (`m_` + 26 Crockford digits, DESIGN §3 "ids") as 18
 * bytes (a mark, its prefix letter, its 128 bits), any other as a length byte and its UTF-8; plus ~10
 * bytes of index (its place, its slots). A string key of a Map cost ~100 bytes, an object of facts ~60
 * more, and Maps and objects live in V8's heap, which grows to a few times what is live before it collects.
 *
 * Exact, whatever the hash gives: two ids are the same only when their entries are (an open-addressing
 * index on the entry's FNV-1a hash, then a byte comparison; an entry is a one-to-one encoding of its
 * id). A string that is not well-formed UTF-16 (a lone surrogate, from a JSON escape) has no UTF-8 of its
 * own, and an id over 254 bytes does not fit a page's length byte: both are kept in a Map beside the
 * pages, with the same numbering.
 */

const PAGE_BYTES = 1 << 20;
/** pages of ids, 2 GiB in all: the place of an id is one int32 (page * PAGE_BYTES + offset) */
const MAX_PAGES = 2048;
const MAX_PAGED_ID = 254;
/** the first byte of a packed ULID-shaped id's entry (any other entry starts with its length, ≤ 254) */
const PACKED = 255;
const PACKED_ENTRY = 18;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** char code → its Crockford digit, -1 for any other (lower case too: a packed id decodes to itself) */
const DIGIT = new Int8Array(128).fill(-1);
for (let d = 0; d < 32; d++) DIGIT[CROCKFORD.charCodeAt(d)] = d;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const COLUMN_PAGE_BITS = 16;
const COLUMN_PAGE = 1 << COLUMN_PAGE_BITS;

/**
 * A growable array of int32 in pages of 64 Ki entries: growing never copies what is there (a doubled
 * typed array briefly holds both copies), and only pages written to are allocated. Entries never set
 * read as `fill`.
 */
export class Int32Column {
  private readonly pages: Int32Array[] = [];
  constructor(private readonly fill = 0) {}

  /** The entry at `k` (≥ 0), `fill` when never set. */
  get(k: number): number {
    const p = this.pages[k >>> COLUMN_PAGE_BITS];
    return p === undefined ? this.fill : p[k & (COLUMN_PAGE - 1)]!;
  }

  /** Sets the entry at `k` (≥ 0) to `v` (an int32). */
  set(k: number, v: number): void {
    const i = k >>> COLUMN_PAGE_BITS;
    let p = this.pages[i];
    if (p === undefined) {
      while (this.pages.length <= i) {
        const page = new Int32Array(COLUMN_PAGE);
        if (this.fill !== 0) page.fill(this.fill);
        this.pages.push(page);
      }
      p = this.pages[i]!;
    }
    p[k & (COLUMN_PAGE - 1)] = v;
  }
}

/** Options of an `IdTable`. */
export interface IdTableOptions {
  /**
   * ANDed with every id's hash (default all bits): tests pass a narrow mask (0 makes every id collide)
   * to check that ids with equal hashes stay apart.
   */
  hashMask?: number;
  /** pages of 1 MiB at most (default 2,048, the most an int32 place addresses); tests pass fewer */
  maxPages?: number;
}

/**
 * Ids interned in order of first sight: the first distinct id gets 0, the next 1, … (`size` in all).
 * Memory: see the module's header. Never throws on an id.
 */
export class IdTable {
  private readonly pages: Buffer[] = [];
  private used = PAGE_BYTES; // no page yet: the first id opens one
  /** per id: its entry's place in the pages, or -1 for one kept in `odd` */
  private readonly at = new Int32Column(-1);
  /** open addressing, linear probing: id + 1, 0 for an empty slot */
  private slots = new Int32Array(1024);
  private paged = 0;
  private count = 0;
  /** ids not in pages (not well-formed, over 254 bytes, or the pages full), both ways */
  private readonly odd = new Map<string, number>();
  private readonly oddText = new Map<number, string>();
  /** the entry of the id being looked up */
  private entry = Buffer.allocUnsafe(1024);
  private readonly mask: number;
  private readonly maxPages: number;

  constructor(options: IdTableOptions = {}) {
    this.mask = options.hashMask ?? -1;
    this.maxPages = Math.min(MAX_PAGES, options.maxPages ?? MAX_PAGES);
  }

  /** How many distinct ids have been added. */
  get size(): number {
    return this.count;
  }

  /** The number of `id`, or -1 when it was never added. */
  find(id: string): number {
    const len = this.encode(id);
    if (len < 0) return this.odd.get(id) ?? -1;
    const k = this.lookup(len, this.hashOf(this.entry, 0, len));
    // ids added once the pages were full are in `odd` too
    return k >= 0 || this.odd.size === 0 ? k : (this.odd.get(id) ?? -1);
  }

  /** The number of `id`, adding it when new (numbers are dense: the new one is the old `size`). */
  add(id: string): number {
    const len = this.encode(id);
    if (len < 0) return this.addOdd(id);
    const h = this.hashOf(this.entry, 0, len);
    const k = this.lookup(len, h);
    if (k >= 0) return k;
    if (this.used + len > PAGE_BYTES) {
      if (this.pages.length >= this.maxPages) return this.addOdd(id);
      this.pages.push(Buffer.allocUnsafeSlow(PAGE_BYTES));
      this.used = 0;
    }
    const n = this.count++;
    // a loop, not Buffer#copy: for ~20 bytes the call costs more than the copy
    const page = this.pages[this.pages.length - 1]!;
    const e = this.entry;
    for (let i = 0; i < len; i++) page[this.used + i] = e[i]!;
    this.at.set(n, (this.pages.length - 1) * PAGE_BYTES + this.used);
    this.used += len;
    this.paged++;
    if (this.paged * 10 > this.slots.length * 7) this.grow();
    this.slot(n, h);
    return n;
  }

  /** The id numbered `k` (0 ≤ k < size), as the string it was added as. */
  text(k: number): string {
    const at = this.at.get(k);
    if (at < 0) return this.oddText.get(k)!;
    const page = this.pages[Math.floor(at / PAGE_BYTES)]!;
    const off = at % PAGE_BYTES;
    const head = page[off]!;
    if (head !== PACKED) return page.toString('utf8', off + 1, off + 1 + head);
    // the prefix letter, '_', then 3 bits and 25 × 5 bits, most significant first
    let s = `${String.fromCharCode(page[off + 1]!)}_`;
    let acc = 0;
    let bits = 0;
    let b = off + 2;
    for (let d = 0; d < 26; d++) {
      const width = d === 0 ? 3 : 5;
      while (bits < width) {
        acc = (acc << 8) | page[b++]!;
        bits += 8;
      }
      bits -= width;
      s += CROCKFORD[(acc >> bits) & 31];
      acc &= (1 << bits) - 1;
    }
    return s;
  }

  private addOdd(id: string): number {
    const known = this.odd.get(id);
    if (known !== undefined) return known;
    const n = this.count++;
    this.odd.set(id, n);
    this.oddText.set(n, id);
    return n;
  }

  /**
   * `id`'s entry into `entry`, its length; -1 for an id kept in `odd` (a lone surrogate: its UTF-8 would
   * be U+FFFD's and lose it; longer than a page's length byte allows).
   */
  private encode(id: string): number {
    if (id.length > MAX_PAGED_ID) return -1;
    if (id.length === 28 && this.pack(id)) return PACKED_ENTRY;
    let ascii = true;
    for (let i = 0; i < id.length; i++) {
      const c = id.charCodeAt(i);
      if (c < 0x80) continue;
      ascii = false;
      if (c >= 0xd800 && c <= 0xdfff) {
        // a high surrogate followed by a low one is a pair; anything else is alone
        const d = id.charCodeAt(i + 1);
        if (c > 0xdbff || !(d >= 0xdc00 && d <= 0xdfff)) return -1;
        i++;
      }
    }
    if (ascii) {
      this.entry[0] = id.length;
      return 1 + this.entry.write(id, 1, 'latin1');
    }
    if (this.entry.length < 1 + id.length * 3) this.entry = Buffer.allocUnsafe(1 + id.length * 3);
    const len = this.entry.write(id, 1, 'utf8');
    if (len > MAX_PAGED_ID) return -1;
    this.entry[0] = len;
    return 1 + len;
  }

  /** A ULID-shaped `id` (a-z, `_`, 0-7, 25 Crockford digits) packed into `entry`; false for any other. */
  private pack(id: string): boolean {
    const p = id.charCodeAt(0);
    if (p < 0x61 || p > 0x7a || id.charCodeAt(1) !== 0x5f) return false;
    const e = this.entry;
    e[0] = PACKED;
    e[1] = p;
    let acc = 0;
    let bits = 0;
    let b = 2;
    for (let i = 2; i < 28; i++) {
      const c = id.charCodeAt(i);
      const d = c < 128 ? DIGIT[c]! : -1;
      if (d < 0 || (i === 2 && d > 7)) return false;
      const width = i === 2 ? 3 : 5;
      acc = (acc << width) | d;
      bits += width;
      if (bits >= 8) {
        bits -= 8;
        e[b++] = acc >> bits;
        acc &= (1 << bits) - 1;
      }
    }
    return true;
  }

  /** FNV-1a of `b[at, at + len)`, with the test mask. */
  private hashOf(b: Uint8Array, at: number, len: number): number {
    let h = FNV_OFFSET;
    for (let i = at; i < at + len; i++) h = Math.imul(h ^ b[i]!, FNV_PRIME);
    return h & this.mask;
  }

  /** The number of the id whose entry is `entry[0, len)` of hash `h`, or -1. */
  private lookup(len: number, h: number): number {
    const slots = this.slots;
    const m = slots.length - 1;
    for (let s = h & m; ; s = (s + 1) & m) {
      const v = slots[s]!;
      if (v === 0) return -1;
      if (this.equals(v - 1, len)) return v - 1;
    }
  }

  private equals(k: number, len: number): boolean {
    const at = this.at.get(k);
    const page = this.pages[Math.floor(at / PAGE_BYTES)]!;
    const off = at % PAGE_BYTES;
    const e = this.entry;
    if (page[off] !== e[0]) return false;
    for (let i = 1; i < len; i++) if (page[off + i] !== e[i]) return false;
    return true;
  }

  /** Doubles the index, each id placed again by the hash of its entry. */
  private grow(): void {
    const old = this.slots;
    this.slots = new Int32Array(old.length * 2);
    for (let s = 0; s < old.length; s++) {
      const v = old[s]!;
      if (v === 0) continue;
      const at = this.at.get(v - 1);
      const page = this.pages[Math.floor(at / PAGE_BYTES)]!;
      const off = at % PAGE_BYTES;
      const len = page[off] === PACKED ? PACKED_ENTRY : 1 + page[off]!;
      this.slot(v - 1, this.hashOf(page, off, len));
    }
  }

  private slot(n: number, h: number): void {
    const slots = this.slots;
    const m = slots.length - 1;
    let s = h & m;
    while (slots[s] !== 0) s = (s + 1) & m;
    slots[s] = n + 1;
  }
}

/**
 * Which Task/Agent call launched each subagent of a Claude Code transcript (issue 25 item 3; the hooks'
 * rule is lib/client/capture/subagents.ts, the table docs/import.md). The importer reads the transcript (and the
 * subagents' own files) once through `observe` before writing anything, then asks `callFor` as each
 * subagent's first record comes. A subagent is tied to a call only by what identifies the two, never by
 * the order their records arrive in:
 *
 * 1. its id: the call whose result names it (`toolUseResult.agentId`, the result's `agentId: …` line,
 *    an `agent_progress` record's `agentId` under `parentToolUseID`), or the call its `.meta.json` names
 *    (`toolUseId`);
 * 2. its first record's `parentUuid`, when that is the record holding the call;
 * 3. its first prompt, which Claude Code gives it as the call's `prompt`;
 * 4. the type its `.meta.json` names (`agentType`) against the call's `subagent_type` (then a call that
 *    names none: Claude Code's default), as the hooks do.
 *
 * Where the `.meta.json` names a type or a description, a call naming another is never taken by 2-4. A
 * call whose result named a subagent is left to that one, even when its records are not in the files.
 * Among calls that nothing tells apart (same prompt, type and description) the first is taken. A
 * subagent nothing ties stays unlinked (`callFor` null, `why` says so).
 */
import { agentIdOfResponse, taskInfoOf } from './claude-code-task.js';

/** Tools that launch a subagent. */
export const SUBAGENT_TOOLS = new Set(['Task', 'Agent']);

/** Cheap looks at a line's text for what `observe` takes (JSON may space its `:` as it likes). */
const SIDECHAIN_RE = /"isSidechain"\s*:\s*true/;
const LAUNCH_RE = /"name"\s*:\s*"(?:Task|Agent)"/;

/** What tied a subagent to its call. */
export type LinkedBy = 'agent_id' | 'tool_use_id' | 'parent_uuid' | 'prompt' | 'agent_type';

/** What a subagent's `agent-<id>.meta.json` says about it (fields absent: null). */
export interface DeclaredSubagent {
  toolUseId: string | null;
  type: string | null;
  description: string | null;
}

interface LaunchCall {
  callId: string;
  /** the uuid of the record holding the call */
  recordUuid: string | null;
  /** the subagent key of the stream that made the call; null: the main agent */
  stream: string | null;
  type: string | null;
  description: string | null;
  prompt: string | null;
}

interface SeenSubagent {
  key: string;
  /** whether a record of it was seen (a `.meta.json` may come first) */
  started: boolean;
  /** the `parentUuid` of its first record */
  rootParent: string | null;
  firstPrompt: string | null;
  declared: DeclaredSubagent | null;
}

type Rec = Record<string, unknown>;

/** The links of one import: fed every record by `observe`, then read by `callFor`. */
export class SubagentLinks {
  private readonly calls = new Map<string, LaunchCall>();
  private readonly callsByRecord = new Map<string, string[]>();
  /** subagent id → the call whose result (or progress record) named it */
  private readonly named = new Map<string, string>();
  private readonly seen = new Map<string, SeenSubagent>();
  /** a sidechain record's uuid → its subagent's key */
  private readonly keyByUuid = new Map<string, string>();
  /** the uuids of the sidechain records the transcript itself holds */
  private readonly inline = new Set<string>();
  /** launch calls whose result was not seen yet */
  private readonly waiting = new Set<string>();
  private links: Map<string, { callId: string; by: LinkedBy }> | null = null;

  /**
   * The key of the subagent a sidechain record belongs to: `fileKey` for a record of a subagent's own
   * file, else its `agentId`, else (older releases name none) the first record of its `parentUuid`
   * chain, else `sidechain`. Stable between `observe` and the import's own pass.
   */
  keyOf(obj: Rec, fileKey?: string): string {
    if (fileKey !== undefined) return fileKey;
    const id = str(obj.agentId);
    if (id !== null) return id;
    const uuid = str(obj.uuid);
    const known = uuid === null ? undefined : this.keyByUuid.get(uuid);
    if (known !== undefined) return known;
    const parent = str(obj.parentUuid) ?? str(obj.logicalParentUuid);
    const up = parent === null ? undefined : this.keyByUuid.get(parent);
    return up ?? (uuid === null ? 'sidechain' : `sidechain-${uuid}`);
  }

  /**
   * Whether line `text` may hold anything `observe` takes: a look at the text that spares parsing the
   * lines that cannot (most tool results). False only when parsing it would change nothing.
   */
  mayMatter(text: string, fileKey?: string): boolean {
    if (fileKey !== undefined ? !this.seen.get(fileKey)?.firstPrompt : SIDECHAIN_RE.test(text)) return true;
    if (LAUNCH_RE.test(text) || text.includes('agent_progress')) return true;
    if (this.waiting.size === 0 || !text.includes('tool_result')) return false;
    for (const id of this.waiting) if (text.includes(id)) return true;
    return false;
  }

  /** Takes what identifies subagents and their calls from one record (`fileKey`: as for `keyOf`). */
  observe(obj: Rec, fileKey?: string): void {
    this.links = null;
    const side = fileKey !== undefined || obj.isSidechain === true;
    const key = side ? this.keyOf(obj, fileKey) : null;
    if (key !== null) this.seeSubagent(key, obj);
    if (key !== null && fileKey === undefined && typeof obj.uuid === 'string') this.inline.add(obj.uuid);
    if (obj.type === 'progress') this.progress(obj);
    const content = isRec(obj.message) ? obj.message.content : undefined;
    if (!Array.isArray(content)) return;
    if (obj.type === 'assistant')
      for (const b of content) {
        if (
          !isRec(b) ||
          b.type !== 'tool_use' ||
          typeof b.id !== 'string' ||
          !SUBAGENT_TOOLS.has(String(b.name))
        )
          continue;
        const info = taskInfoOf(b.input);
        const prompt = isRec(b.input) ? str(b.input.prompt) : null;
        const recordUuid = str(obj.uuid);
        this.calls.set(b.id, { callId: b.id, recordUuid, stream: key, ...info, prompt });
        this.waiting.add(b.id);
        if (recordUuid !== null)
          this.callsByRecord.set(recordUuid, [...(this.callsByRecord.get(recordUuid) ?? []), b.id]);
      }
    if (obj.type === 'user') this.results(obj, content);
  }

  /** What a subagent's `.meta.json` says (`key`: its file's id). */
  declare(key: string, declared: DeclaredSubagent): void {
    this.links = null;
    const s = this.seen.get(key) ?? newSeen(key);
    s.declared = declared;
    this.seen.set(key, s);
  }

  /** A subagent file's record that the transcript holds too (the same `uuid`): a copy, imported once. */
  isCopy(obj: Rec): boolean {
    return typeof obj.uuid === 'string' && this.inline.has(obj.uuid);
  }

  /** The subagent ids the transcript's results name (to find their files). */
  namedIds(): string[] {
    return [...this.named.keys()];
  }

  /** The call that launched subagent `key` and what tied them, or null when nothing does. */
  callFor(key: string): { callId: string; by: LinkedBy } | null {
    this.links ??= this.resolve();
    return this.links.get(key) ?? null;
  }

  /** Why subagent `key` is linked to no call (for its note). */
  why(key: string): string {
    const s = this.seen.get(key);
    const prompt = s?.firstPrompt ?? null;
    const given = prompt !== null && [...this.calls.values()].some((c) => c.prompt?.trim() === prompt);
    const reasons = [
      'no Task/Agent call names its id',
      prompt === null
        ? 'it has no prompt of its own to match'
        : given
          ? 'the calls given its prompt are tied to other subagents'
          : 'no call was given its first prompt',
    ];
    if (s?.declared?.type) reasons.push(`no call asks for its type ${JSON.stringify(s.declared.type)}`);
    // `agent-acompact-<id>`: the agent Claude Code runs to compact the context, which no call launches.
    if (key.startsWith('acompact')) reasons.push("it is Claude Code's context compaction agent");
    return reasons.join(', ');
  }

  private seeSubagent(key: string, obj: Rec): void {
    const s = this.seen.get(key) ?? newSeen(key);
    this.seen.set(key, s);
    if (!s.started) {
      s.started = true;
      s.rootParent = str(obj.parentUuid) ?? str(obj.logicalParentUuid);
    }
    const uuid = str(obj.uuid);
    if (uuid !== null) this.keyByUuid.set(uuid, key);
    if (s.firstPrompt === null && obj.type === 'user' && obj.isMeta !== true) s.firstPrompt = promptText(obj);
  }

  /** Results of launch calls: the subagent id each names. */
  private results(obj: Rec, content: unknown[]): void {
    const launches = content.filter(
      (b): b is Rec => isRec(b) && b.type === 'tool_result' && this.calls.has(String(b.tool_use_id)),
    );
    for (const b of launches) {
      const callId = String(b.tool_use_id);
      this.waiting.delete(callId);
      // `toolUseResult` is the record's: it speaks for the block only when the record holds one result.
      const id =
        (content.length === 1 ? agentIdOfResponse(obj.toolUseResult) : null) ?? agentIdInText(b.content);
      if (id !== null && !this.named.has(id)) this.named.set(id, callId);
    }
  }

  /** An `agent_progress` record names a running subagent under the call that launched it. */
  private progress(obj: Rec): void {
    const data = isRec(obj.data) ? obj.data : null;
    const id = data?.type === 'agent_progress' ? str(data.agentId) : null;
    const callId = str(obj.parentToolUseID);
    if (id !== null && callId !== null && !this.named.has(id)) this.named.set(id, callId);
  }

  /** Ties every subagent seen (rules in the module comment). */
  private resolve(): Map<string, { callId: string; by: LinkedBy }> {
    const links = new Map<string, { callId: string; by: LinkedBy }>();
    const claimed = new Set<string>();
    const reservedFor = new Map([...this.named].map(([id, call]) => [call, id]));
    const subs = [...this.seen.values()];
    const tie = (s: SeenSubagent, callId: string, by: LinkedBy) => {
      links.set(s.key, { callId, by });
      claimed.add(callId);
    };
    for (const s of subs) {
      const byId = this.named.get(s.key);
      const byMeta = s.declared?.toolUseId ?? null;
      const callId = byId ?? byMeta;
      if (callId !== null && this.calls.has(callId) && !claimed.has(callId))
        tie(s, callId, byId !== undefined ? 'agent_id' : 'tool_use_id');
    }
    const isOpen = (s: SeenSubagent) => (c: LaunchCall | undefined) =>
      c !== undefined &&
      !claimed.has(c.callId) &&
      c.stream !== s.key &&
      (reservedFor.get(c.callId) ?? s.key) === s.key &&
      agrees(s.declared, c);
    const byPrompt = new Map<string, LaunchCall[]>();
    for (const c of this.calls.values()) {
      const p = c.prompt?.trim();
      if (p) byPrompt.set(p, [...(byPrompt.get(p) ?? []), c]);
    }
    const samePrompt = (s: SeenSubagent) => (c: LaunchCall) =>
      s.firstPrompt !== null && c.prompt?.trim() === s.firstPrompt;
    const passes: [LinkedBy, (s: SeenSubagent) => LaunchCall | undefined][] = [
      [
        'parent_uuid',
        (s) => {
          const at = s.rootParent === null ? [] : (this.callsByRecord.get(s.rootParent) ?? []);
          const cands = at.map((id) => this.calls.get(id)).filter(isOpen(s)) as LaunchCall[];
          return cands.find(samePrompt(s)) ?? cands[0];
        },
      ],
      ['prompt', (s) => (s.firstPrompt === null ? undefined : byPrompt.get(s.firstPrompt)?.find(isOpen(s)))],
      [
        'agent_type',
        (s) => {
          const type = s.declared?.type?.trim().toLowerCase();
          if (!type) return undefined;
          const cands = [...this.calls.values()].filter(isOpen(s));
          return (
            cands.find((c) => c.type?.trim().toLowerCase() === type) ?? cands.find((c) => c.type === null)
          );
        },
      ],
    ];
    for (const [by, find] of passes)
      for (const s of subs) {
        if (links.has(s.key)) continue;
        const c = find(s);
        if (c !== undefined) tie(s, c.callId, by);
      }
    return links;
  }
}

function newSeen(key: string): SeenSubagent {
  return { key, started: false, rootParent: null, firstPrompt: null, declared: null };
}

/** A `.meta.json`'s type and description do not contradict the call's (either absent agrees). */
function agrees(d: DeclaredSubagent | null, c: LaunchCall): boolean {
  const same = (a: string | null | undefined, b: string | null) =>
    !a || !b || a.trim().toLowerCase() === b.trim().toLowerCase();
  return same(d?.type, c.type) && same(d?.description, c.description);
}

/** The text of a `user` record that is a prompt (a string, or text blocks and no tool result), trimmed. */
function promptText(obj: Rec): string | null {
  const content = isRec(obj.message) ? obj.message.content : undefined;
  if (typeof content === 'string') return content.trim() || null;
  if (!Array.isArray(content) || content.some((b) => isRec(b) && b.type === 'tool_result')) return null;
  const text = content
    .filter((b): b is Rec => isRec(b) && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n\n')
    .trim();
  return text || null;
}

/** The `agentId: <id>` (or a team agent's `agent_id: <id>`) line of a launch call's result text. */
function agentIdInText(content: unknown): string | null {
  const texts =
    typeof content === 'string'
      ? [content]
      : Array.isArray(content)
        ? content.filter((b): b is Rec => isRec(b) && typeof b.text === 'string').map((b) => b.text as string)
        : [];
  for (const t of texts) {
    const m = /(?:^|\n)\s*agent_?id:\s*([^\s()]+)/i.exec(t);
    if (m) return m[1]!;
  }
  return null;
}

function isRec(v: unknown): v is Rec {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v : null;
}

/**
 * Where a Claude Code session's subagents wrote their own transcripts (docs/import.md): since Claude
 * Code 2.1.2 `<dir>/<session>/subagents/agent-<id>.jsonl` beside the session's `<dir>/<session>.jsonl`,
 * each with an `agent-<id>.meta.json` (`agentType`, and in some releases `description`, `toolUseId`);
 * before that `<dir>/agent-<id>.jsonl`, beside every other session's subagents. Every record of such a
 * file has `isSidechain: true` and the subagent's `agentId` (its `<id>`).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import type { DeclaredSubagent } from './claude-code-links.js';

/** One subagent's own transcript. */
export interface SubagentFile {
  path: string;
  /** the subagent's id (`agent-<id>.jsonl`) */
  key: string;
  /** what its `.meta.json` says, or null (none, unreadable, not JSON) */
  declared: DeclaredSubagent | null;
}

const FILE_RE = /^agent-(.+)\.jsonl$/;
/** A `.meta.json` is a few fields; anything larger is not one. */
const MAX_META_BYTES = 64 * 1024;

const Meta = z.looseObject({
  agentType: z.string().optional(),
  description: z.string().optional(),
  toolUseId: z.string().optional(),
});

/**
 * The subagent files of the session transcript `transcriptPath`: every `agent-*.jsonl` of its
 * `subagents/` folder, and the `agent-<id>.jsonl` beside it for each id in `namedIds` (the ids its
 * results name: the older layout mixes every session's subagents in one folder, so only those named are
 * this session's). Regular files only, sorted by name. None for a transcript that is itself a subagent's
 * (`agent-*.jsonl`). Throws only what reading a folder throws other than ENOENT/ENOTDIR.
 */
export async function subagentFiles(transcriptPath: string, namedIds: string[]): Promise<SubagentFile[]> {
  const dir = dirname(transcriptPath);
  const base = basename(transcriptPath).replace(/\.jsonl$/, '');
  if (FILE_RE.test(basename(transcriptPath))) return [];
  const found = new Map<string, string>();
  const sub = join(dir, base, 'subagents');
  for (const name of (await names(sub)).sort()) {
    const m = FILE_RE.exec(name);
    if (m && (await isFile(join(sub, name)))) found.set(m[1]!, join(sub, name));
  }
  for (const id of namedIds) {
    const path = join(dir, `agent-${id}.jsonl`);
    if (!found.has(id) && !id.includes('/') && (await isFile(path))) found.set(id, path);
  }
  const out: SubagentFile[] = [];
  for (const [key, path] of found)
    out.push({ path, key, declared: await readMeta(path.replace(/\.jsonl$/, '.meta.json')) });
  return out;
}

/** A `.meta.json`'s fields, or null when there is none or it is not one. */
async function readMeta(path: string): Promise<DeclaredSubagent | null> {
  try {
    const s = await stat(path);
    if (!s.isFile() || s.size > MAX_META_BYTES) return null;
    const m = Meta.safeParse(JSON.parse(await readFile(path, 'utf8')));
    if (!m.success) return null;
    return {
      toolUseId: m.data.toolUseId || null,
      type: m.data.agentType || null,
      description: m.data.description || null,
    };
  } catch {
    return null; // absent or not JSON: the subagent is linked by what its records say
  }
}

async function names(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw err;
  }
}

/** A regular file (not a FIFO, a device or a folder: reading those could block or never end). */
async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

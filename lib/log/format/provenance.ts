/**
 * Writer provenance (issue 24 item 1, DESIGN §2 "A fact counts as evidence only when something other than
 * the agent's own words recorded it", docs/status.md "What a verdict rests on"): who put a writer's
 * events into the record. A writer says it in its `writer.start`, as `meta.provenance` (an explicit field,
 * never inferred from a name); the server keeps the value of the first chunk in its writer index, beside
 * the label of the token that uploaded it.
 *
 * - observed (a program other than the model recorded what happened):
 *   - `hook`: the runtime's own hooks (Claude Code hook events, Codex notify), written by `hansard hook`;
 *   - `harness`: a harness's event stream (hcn run/observe, `claude -p --output-format stream-json`,
 *     `codex exec --json`);
 *   - `transcript`: an import of the runtime's own transcript (a Claude Code session file, a Codex rollout);
 *   - `library`: the library writer (`openSession`) in the tool's own process.
 * - declared: `declared`, what the model itself handed over (MCP `capture_subagent_messages`): the
 *   agent's own words, which never support or refute a claim.
 *
 * A writer without the field (one written before provenance was recorded, or by another tool) is
 * `unknown`: not observed, so its results count for nothing either.
 */

/** The provenance kinds a writer may declare in `meta.provenance`. */
export const PROVENANCE_KINDS = ['hook', 'harness', 'transcript', 'library', 'declared'] as const;
export type ProvenanceKind = (typeof PROVENANCE_KINDS)[number];

/** A writer's provenance as read: one of the kinds, or `unknown` (absent, not a string, not a kind). */
export type Provenance = ProvenanceKind | 'unknown';

const OBSERVED: ReadonlySet<string> = new Set<Provenance>(['hook', 'harness', 'transcript', 'library']);
const KINDS: ReadonlySet<string> = new Set<string>(PROVENANCE_KINDS);

/** The provenance a `writer.start`'s `meta` states: `meta.provenance` when it is a known kind, else `unknown`. */
export function provenanceOf(meta: unknown): Provenance {
  if (typeof meta !== 'object' || meta === null) return 'unknown';
  const p = (meta as Record<string, unknown>).provenance;
  return typeof p === 'string' && KINDS.has(p) ? (p as ProvenanceKind) : 'unknown';
}

/** A provenance string as kept by the writer index (or null): `unknown` unless it is a known kind. */
export function asProvenance(p: string | null | undefined): Provenance {
  return typeof p === 'string' && KINDS.has(p) ? (p as ProvenanceKind) : 'unknown';
}

/** True when results of a writer of this provenance were observed (may support or refute a claim). */
export function isObserved(p: Provenance): boolean {
  return OBSERVED.has(p);
}

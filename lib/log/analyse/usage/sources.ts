/**
 * Usage of whole segments (issue 27 item 5, `hansard usage DIR`, `--recompute`): each writer's segment
 * folded on its own, in file order (the fold needs no merge: a writer's totals depend only on its own
 * events). Quarantined lines (torn, malformed) count nothing, as in the replay.
 */
import type { MergeSource } from '../../read/merge.js';
import { sessionDirSources } from '../../read/session-dir.js';
import { type FoldState, foldEvent, newFoldState, type UsageDelta } from './fold.js';

/** Every delta of the sources' segments, and each writer's fold state at its end. Reading errors propagate. */
export async function foldSources(
  sources: readonly MergeSource[],
): Promise<{ deltas: UsageDelta[]; states: Map<string, FoldState> }> {
  const deltas: UsageDelta[] = [];
  const states = new Map<string, FoldState>();
  for (const src of sources) {
    const s = states.get(src.w) ?? newFoldState();
    states.set(src.w, s);
    if (src.batches) {
      for await (const batch of src.batches)
        for (const item of batch) if (item.kind === 'event') foldEvent(s, src.w, item.event.obj, deltas);
    } else {
      for await (const item of src.items)
        if (item.kind === 'event') foldEvent(s, src.w, item.event.obj, deltas);
    }
  }
  return { deltas, states };
}

/** `foldSources` of a session directory's segments (`w_<ULID>.jsonl`). Throws ENOENT when `dir` is not there. */
export function foldSessionDir(
  dir: string,
): Promise<{ deltas: UsageDelta[]; states: Map<string, FoldState> }> {
  return foldSources(sessionDirSources(dir));
}

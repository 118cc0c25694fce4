/**
 * What an importer says of the lines it could not take as they are (`problems` of every import result,
 * docs/import.md "What an import reports"), and the author of the notes it keeps them in.
 */
import type { z } from 'zod';

/**
 * What became of a line an importer could not take as it is (docs/import.md "What an import reports"):
 * - `kept_as_note`: not understood; kept exactly as written, as a note (`unknown_record`/`unknown_block`);
 * - `orphan_result`: a result answering no call seen before it; kept as a result whose `action_id` is the
 *   call id it names (verify warns: `dangling_reference`);
 * - `read_in_part`: imported, but a part of it could not be used (a timestamp that is not RFC 3339: the
 *   line before's time is used; bytes that are not UTF-8: replaced; a stream of another schema).
 */
export type ImportProblemKind = 'kept_as_note' | 'orphan_result' | 'read_in_part';

/** A line the importer could not take as it is (it is still recorded: `kind` says how). */
export interface ImportProblem {
  /** 1-based line number in the transcript (in `file` when set) */
  line: number;
  message: string;
  kind: ImportProblemKind;
  /** the subagent file the line is in; absent for the transcript's own lines */
  file?: string;
}

/** Author of the notes the importer writes for what it does not map (unknown lines and blocks). */
export const IMPORT_NOTE_AUTHOR = 'hansard-import';

/** zod's issues as one line. */
export function zodSummary(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`).join('; ');
}

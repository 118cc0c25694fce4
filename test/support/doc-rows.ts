/**
 * The rows of a `| what is sent | answer |` table under a `## ` heading of a doc, so a hostile-input
 * suite can check that every case it runs is documented with the status it asserts, and that no row of
 * its section is left without a case.
 */
import { readFileSync } from 'node:fs';

/** `what is sent` → `answer` of the table in section `heading` (the text after `## `) of `docPath`. */
export function docRows(docPath: URL, heading: string): Map<string, string> {
  const doc = readFileSync(docPath, 'utf8');
  const at = doc.indexOf(`\n## ${heading}\n`);
  if (at === -1) throw new Error(`${docPath.pathname} has no section "## ${heading}"`);
  const rows = new Map<string, string>();
  for (const line of doc
    .slice(at + 1)
    .split('\n')
    .slice(1)) {
    if (line.startsWith('## ')) break;
    const m = /^\| (.+) \| (.+) \|$/.exec(line);
    if (m && !m[1]!.startsWith('---') && m[1] !== 'what is sent') rows.set(m[1]!, m[2]!);
  }
  return rows;
}

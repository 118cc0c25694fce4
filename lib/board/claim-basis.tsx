/**
 * What a checked claim rests on, as the session page shows it beside each Declared claim (issue 24.1,
 * docs/status.md "What a verdict rests on"): the recorded result (action, exit code), the writer that
 * recorded it with its agent and provenance, the token that uploaded that writer; and, when another writer's
 * correction changed the action or its result, that the claim is contested and by whom.
 */

import type { CheckedEvent } from '../contract/status.js';
import { escapeControl } from '../log/format/escape.js';

type Check = CheckedEvent['evidence'][number]['check'];

const t = (s: string | null | undefined): string => escapeControl(s ?? '');

/** How a writer's provenance reads in the legend: who recorded its events, and whether they count. */
export const PROVENANCE_WORDS: Record<string, string> = {
  hook: 'recorded by the runtime’s hooks',
  harness: 'recorded from a harness stream',
  transcript: 'imported from the runtime’s transcript',
  library: 'recorded by the tool’s own process',
  declared: 'declared by the agent: never evidence',
  unknown: 'of unknown provenance: never evidence',
};

/** The label a claim's verdict shows: `contested` when another writer corrected what it names. */
export function verdictLabel(check: Check): string {
  return check.contested.length > 0 ? 'contested' : check.verdict;
}

/** The verdict as a badge: its class is the verdict's; a contested one says so. */
export function VerdictBadge({ check }: { check: Check }) {
  const label = verdictLabel(check);
  return (
    <span class={`verdict ${check.verdict}${label === 'contested' ? ' contested' : ''}`} data-label={label}>
      {label}
    </span>
  );
}

/** The result a claim rests on and who recorded it, then each contesting correction; nothing when none. */
export function ClaimBasis({ check }: { check: Check }) {
  const r = check.rests_on;
  const basis = r ? (
    <span class="rests-on" data-provenance={r.provenance}>
      {' '}
      · rests on{' '}
      {r.command === null ? (
        ''
      ) : (
        <>
          <code>{t(r.command)}</code>,{' '}
        </>
      )}
      {r.exit_code === null ? 'no exit code' : `exit code ${r.exit_code}`} recorded by <code>{r.w}</code> (
      {r.agent === null ? '' : `${t(r.agent)}, `}
      {r.provenance}){r.token_label === null ? '' : <> uploaded with token “{t(r.token_label)}”</>}
    </span>
  ) : null;
  return (
    <>
      {basis}
      {check.contested.map((c) => (
        <span class="contest">
          {' '}
          · {t(c.field)} of <code>{c.target_id}</code> corrected from {t(JSON.stringify(c.was ?? null))} to{' '}
          {t(JSON.stringify(c.value ?? null))} by <code>{c.w}</code> ({c.provenance})
        </span>
      ))}
    </>
  );
}

/**
 * A row's title in a person's view (lib/board/components.tsx `RowTitle`): what that person asked first,
 * unless the summary withheld it (`''`: a correction of it may have been dropped), in which case the
 * session's title stands in rather than an empty link.
 */
import { describe, expect, it } from 'vitest';
import { RowTitle } from '../../lib/board/components.js';
import type { OverviewRow } from '../../lib/service/board/overview-schemas.js';

const row = (asked: OverviewRow['asked']) =>
  ({ sid: 's_01M8QVP6VG8A55Q77YDVZ1DX4R', title: 'Restart the payments worker', asked }) as OverviewRow;
const html = (s: OverviewRow, person?: string) => String(<RowTitle s={s} person={person} href="/x" />);

describe('RowTitle', () => {
  it("shows what the person asked, the session's title beneath", () => {
    const out = html(
      row([{ user_id: 'sam', text: 'Check the disk', ts: '2026-12-01T00:00:00.000Z' }]),
      'sam',
    );
    expect(out).toContain('<span class="row-title" data-asked="">Check the disk</span>');
    expect(out).toContain('Session: Restart the payments worker');
  });

  it("shows the session's title when the person's first prompt is withheld", () => {
    const out = html(row([{ user_id: 'sam', text: '', ts: '2026-12-01T00:00:00.000Z' }]), 'sam');
    expect(out).toContain('<span class="row-title">Restart the payments worker</span>');
    expect(out).not.toContain('data-asked');
  });
});

/**
 * The board's CSS, one stylesheet inlined in every page (`style-src 'unsafe-inline'` is the only
 * relaxation of the CSP, and it is for styles alone). Light and dark colours follow the system
 * (`prefers-color-scheme`); each pair keeps text at 4.5:1 or more against its background (checked by
 * axe-core in test/board/overview.browser.test.ts in both). Focus is always visible; the overview's group
 * tables share fixed column widths (`table.overview`, its `<colgroup>`), so the groups line up; under
 * 700 px the session tables become stacked cards, and nothing scrolls sideways down to 360 px.
 */
export const CSS = `
:root { color-scheme: light dark; --bg: #ffffff; --fg: #111827; --muted: #4b5563; --line: #d1d5db;
  --link: #1d4ed8; --focus: #2563eb; --card: #f9fafb; --error: #b91c1c; --ok: #15803d; --warn: #b45309; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0f172a; --fg: #e5e7eb; --muted: #a3acb9; --line: #334155; --link: #93c5fd; --focus: #60a5fa;
    --card: #1e293b; --error: #fca5a5; --ok: #86efac; --warn: #fcd34d; }
}
* { box-sizing: border-box; } [hidden] { display: none !important; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1rem 1.5rem;
  background: var(--bg); color: var(--fg); }
a { color: var(--link); } a:visited { color: var(--link); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; border-radius: 2px; }
.skip { position: absolute; left: -9999px; top: 0; } .skip:focus { left: 1rem; top: .5rem; background: var(--bg); padding: .3rem .6rem; z-index: 1; }
header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; justify-content: space-between; align-items: baseline; border-bottom: 1px solid var(--line); margin-bottom: 1rem; }
header .tools { display: flex; flex-wrap: wrap; gap: .3rem 1rem; align-items: baseline; min-width: 0; }
h1 { font-size: 1.3rem; margin: .2rem 0 .6rem; } h1 a, h1 a:visited { color: inherit; text-decoration: none; }
h2 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .45rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
th { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85rem; }
small.mono { font-size: .78rem; }
.state { display: inline-block; padding: .05rem .5rem; border-radius: 1rem; font-size: .8rem; font-weight: 600; white-space: nowrap; }
time, header button { white-space: nowrap; }
.working { background: #dbeafe; color: #1e3a8a; } .blocked { background: #fee2e2; color: #7f1d1d; }
.needs_review { background: #fef3c7; color: #78350f; } .done { background: #dcfce7; color: #14532d; }
.none { background: #e5e7eb; color: #374151; }
@media (prefers-color-scheme: dark) {
  .working { background: #1e3a8a; color: #dbeafe; } .blocked { background: #7f1d1d; color: #fee2e2; }
  .needs_review { background: #78350f; color: #fef3c7; } .done { background: #14532d; color: #dcfce7; }
  .none { background: #374151; color: #e5e7eb; }
}
.muted { color: var(--muted); } .empty { padding: 2rem 0; }
pre.timeline { white-space: pre-wrap; word-break: break-word; font-size: .8rem; line-height: 1.5; }
form.inline { display: inline; } button, input, select { font: inherit; } button { cursor: pointer; }
.error { color: var(--error); }
nav.pages { margin: 1rem 0; display: flex; flex-wrap: wrap; gap: .5rem 1rem; } p.count { margin: 0 0 .8rem; }
.live { margin: 0; font-size: .85rem; } .live[data-state="live"] { color: var(--ok); }
.live[data-state="disconnected"] { color: var(--error); font-weight: 600; }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: flex-end; margin: 0 0 1rem; }
form.filters label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); }
form.filters select, form.filters input { min-width: 9rem; max-width: 100%; color: var(--fg); background: var(--bg); border: 1px solid var(--muted); border-radius: 4px; padding: .25rem .4rem; }
ul.summary { list-style: none; display: flex; flex-wrap: wrap; gap: .4rem 1.2rem; padding: 0; margin: 0 0 1rem; }
.reason strong { font-weight: 600; } .row-title { font-weight: 600; } .row-sub { font-size: .85rem; }
a.row-link { color: var(--link); text-decoration: none; display: block; } a.row-link .row-title { text-decoration: underline; text-underline-offset: .15em; }
a.row-link .row-title { display: block; } a.row-link small { display: block; color: var(--link, #1d4ed8); text-decoration: underline; }
ul.who-agents li::before { content: "agent "; color: var(--muted); font-size: .75rem; }
ul.who-people li::before { content: "person "; color: var(--muted); font-size: .75rem; }
strong.unsupported { color: var(--error); }
.look-alike { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .75rem; color: var(--error); white-space: nowrap; }
table.overview { table-layout: fixed; }
col.c-session { width: 28%; } col.c-who { width: 17%; } col.c-state { width: 12.5rem; } col.c-cost { width: 7.5rem; } col.c-last { width: 7rem; }
@media (max-width: 1000px) { col.c-session { width: 19%; } col.c-who { width: 15.5%; } col.c-state { width: 6.5rem; } col.c-cost { width: 6.25rem; } col.c-last { width: 6.25rem; } table.overview .state { white-space: normal; } td.cost { white-space: normal; } }
.usage-band { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; margin: .5rem 0; font-variant-numeric: tabular-nums; } .usage-band .fail { color: var(--error); font-weight: 600; } .usage-band .warn { color: var(--warn); font-weight: 600; } td.cost { font-variant-numeric: tabular-nums; white-space: nowrap; }
.pill { display: inline-block; padding: .05rem .5rem; border-radius: 1rem; font-size: .8rem; font-weight: 600; white-space: nowrap; }
.dl-pending { background: #fef3c7; color: #78350f; } .dl-delivered { background: #dcfce7; color: #14532d; }
.dl-dead { background: #fee2e2; color: #7f1d1d; } .dl-skipped { background: #e5e7eb; color: #374151; }
@media (prefers-color-scheme: dark) {
  .dl-pending { background: #78350f; color: #fef3c7; } .dl-delivered { background: #14532d; color: #dcfce7; }
  .dl-dead { background: #7f1d1d; color: #fee2e2; } .dl-skipped { background: #374151; color: #e5e7eb; }
}
.dead-count { color: var(--error); font-size: .9rem; } .dead-none { font-size: .9rem; font-weight: normal; }
.flash { border: 1px solid var(--line); border-left: 4px solid var(--ok); background: var(--card); padding: .5rem .8rem; }
.flash.error { border-left-color: var(--error); }
section.alert-target { border-top: 1px solid var(--line); margin: 1.2rem 0 0; padding-top: .2rem; }
dl.target-rule { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .15rem 1rem; margin: .4rem 0 .8rem; }
dl.target-rule dt { color: var(--muted); font-size: .85rem; } dl.target-rule dd { margin: 0; overflow-wrap: anywhere; }
form.send-test { margin: 0 0 .6rem; } h3 { font-size: .95rem; margin: 1rem 0 .3rem; }
table.deliveries td.last-answer { font-size: .85rem; } table.deliveries th { white-space: nowrap; }
ul.session-alerts { list-style: none; padding: 0; margin: .2rem 0; } ul.session-alerts li { margin: 0 0 .3rem; overflow-wrap: anywhere; }
header nav.board-nav { font-size: .9rem; display: flex; flex-wrap: wrap; gap: 0 .8rem; }
.signed-in { flex: 1 0 100%; display: flex; flex-wrap: wrap; gap: .2rem 1rem; align-items: baseline; font-size: .9rem; min-width: 0; margin: -.3rem 0 .5rem; }
.signed-in p { margin: 0; } .who-am-i strong { overflow-wrap: anywhere; } p.mine-hint { font-size: .8rem; max-width: 34rem; overflow-wrap: anywhere; }
ul.mine-ids { display: inline; list-style: none; padding: 0; margin: 0; } ul.mine-ids li { display: inline; } ul.mine-ids li + li::before { content: ", "; }
form.oidc, form.token-sign-in { margin: .6rem 0 1.2rem; } form.oidc input, form.token-sign-in input { max-width: 100%; }
table.audit td, table.tokens td { font-size: .9rem; } table.audit code.action { white-space: nowrap; } table.audit th, table.tokens th, table.tokens button { overflow-wrap: normal; white-space: nowrap; } table.tokens tr[data-state="revoked"] td, table.tokens tr[data-state="expired"] td { color: var(--muted); }
td ul.who { list-style: none; padding: 0; margin: .2rem 0 0; display: flex; flex-wrap: wrap; gap: 0 .6rem; }
@media (max-width: 700px) {
  body { padding: .6rem .8rem; }
  table, thead, tbody, tr, th, td { display: block; width: 100%; } colgroup { display: none; }
  thead { position: absolute; left: -9999px; }
  tr { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 .8rem; padding: .3rem .2rem; background: var(--card); }
  td { border: 0; padding: .25rem .5rem; }
  td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: .8rem; }
  form.filters label, form.filters select, form.filters input { width: 100%; }
}
`;

/**
 * The session timeline's own CSS (issue 14.3), after the board's shared stylesheet (./styles.ts): the
 * writers' palette, rows, folded turns and the side panel. Each palette colour is a pair (a tinted chip
 * and a border) chosen for text at 4.5:1 or more in light and dark; a writer's name is always written
 * beside its colour, so nothing is told by colour alone. Under 900 px the side panel stacks under the
 * rows; nothing scrolls sideways down to 360 px.
 */

/** How many distinct writer colours there are (writers past it reuse them, still named). */
export const PALETTE_SIZE = 8;

/** [chip background, chip text, border] in light, then in dark. */
const PALETTE: readonly [string, string, string, string, string, string][] = [
  ['#dbeafe', '#1e3a8a', '#2563eb', '#1e3a8a', '#dbeafe', '#60a5fa'],
  ['#dcfce7', '#14532d', '#16a34a', '#14532d', '#dcfce7', '#4ade80'],
  ['#f3e8ff', '#581c87', '#9333ea', '#581c87', '#f3e8ff', '#c084fc'],
  ['#ffedd5', '#7c2d12', '#ea580c', '#7c2d12', '#ffedd5', '#fb923c'],
  ['#ccfbf1', '#134e4a', '#0d9488', '#134e4a', '#ccfbf1', '#2dd4bf'],
  ['#fce7f3', '#831843', '#db2777', '#831843', '#fce7f3', '#f472b6'],
  ['#fef9c3', '#713f12', '#ca8a04', '#713f12', '#fef9c3', '#facc15'],
  ['#e2e8f0', '#1e293b', '#475569', '#1e293b', '#e2e8f0', '#94a3b8'],
];

const light = PALETTE.map(
  ([bg, fg, line], i) => `.wc${i} { --wc-line: ${line}; } .chip.wc${i} { background: ${bg}; color: ${fg}; }`,
).join('\n');
const dark = PALETTE.map(
  ([, , , bg, fg, line], i) =>
    `.wc${i} { --wc-line: ${line}; } .chip.wc${i} { background: ${bg}; color: ${fg}; }`,
).join('\n');

export const TIMELINE_CSS = `
header h1 { min-width: 0; flex: 1 1 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
header .tools { flex: none; }
nav.back { margin: 0 0 .2rem; }
.session { display: grid; grid-template-columns: minmax(0, 1fr) 20rem; grid-template-areas: "main side";
  gap: 1.5rem; align-items: start; }
.session > main { grid-area: main; }
.session > aside { grid-area: side; border-left: 1px solid var(--line); padding-left: 1rem; min-width: 0; overflow-wrap: anywhere; }
.session > aside summary { cursor: pointer; }
.session > aside summary h2 { display: inline; font-size: 1.1rem; }
.session > aside details { margin: 0 0 .8rem; }
@media (max-width: 900px) {
  .session { grid-template-columns: minmax(0, 1fr); grid-template-areas: "side" "main"; gap: .5rem; }
  .session > aside { border-left: 0; border-bottom: 1px solid var(--line); padding: 0 0 .3rem; }
  .session > aside details { margin: 0 0 .3rem; }
}
.chip { display: inline-block; padding: 0 .45rem; border-radius: .6rem; font-size: .8rem; font-weight: 600;
  border: 1px solid var(--wc-line, var(--line)); overflow-wrap: anywhere; }
.person-chip { background: var(--card); color: var(--fg); }
ul.legend { list-style: none; padding: 0; margin: .3rem 0 1rem; display: flex; flex-wrap: wrap; gap: .4rem 1rem; }
ul.legend li { max-width: 100%; }
ol.tl { list-style: none; padding: 0; margin: 0; }
ol.tl > li { border-left: 4px solid var(--wc-line, var(--line)); padding: .35rem .6rem; margin: 0 0 .4rem;
  background: var(--bg); overflow-wrap: anywhere; scroll-margin-top: 1rem; }
ol.tl > li:target { outline: 3px solid var(--focus); outline-offset: 1px; }
ol.tl > li.turn { border-left: 0; padding: 0; }
ol.tl > li.day { border-left: 0; padding: .6rem 0 .1rem; margin: 0; }
ol.tl > li.day h4 { margin: 0; font-size: 1rem; }
p.when { margin: .2rem 0; }
ol.tl ol.tl { margin: .3rem 0 0 .8rem; }
details.turn-box { border: 1px solid var(--line); border-left: 4px solid var(--wc-line, var(--line)); border-radius: 4px; padding: .3rem .5rem; }
details.turn-box > summary { cursor: pointer; padding: .15rem 0; }
.row-head { display: flex; flex-wrap: wrap; gap: .2rem .6rem; align-items: baseline; font-size: .85rem; }
.kind { font-weight: 700; text-transform: uppercase; font-size: .72rem; letter-spacing: .04em; color: var(--muted); }
.row-body { margin: .2rem 0 0; }
.text { white-space: pre-wrap; margin: .2rem 0 0; font: inherit; overflow-wrap: anywhere; }
pre.out { white-space: pre-wrap; overflow-wrap: anywhere; margin: .3rem 0 0; padding: .35rem .5rem; background: var(--card);
  border: 1px solid var(--line); border-radius: 4px; font-size: .8rem; }
details.output > summary { cursor: pointer; font-size: .85rem; margin: .2rem 0 0; }
.fail { color: var(--error); font-weight: 600; } .okay { color: var(--ok); font-weight: 600; }
.attr, .corrected, .cut { font-size: .85rem; color: var(--muted); margin: .2rem 0 0; }
.usage { font-size: .85rem; color: var(--muted); margin: .2rem 0 0; font-variant-numeric: tabular-nums; } .usage.unknown { font-style: italic; } .turn-usage { color: var(--muted); font-weight: 400; font-variant-numeric: tabular-nums; }
ul.problems { list-style: none; margin: .3rem 0 0; padding: .3rem .5rem; border: 1px dashed var(--error); border-radius: 4px; font-size: .85rem; }
.sev { font-weight: 700; }
.declared-badge { display: inline-block; padding: 0 .4rem; border: 1px dashed var(--fg); border-radius: .4rem; font-size: .75rem; font-weight: 700; }
ul.claims { margin: .3rem 0 0; padding-left: 1.2rem; font-size: .9rem; }
.verdict { font-weight: 700; } .verdict.unsupported { color: var(--error); } .verdict.supported { color: var(--ok); }
.verdict.contested { text-decoration: underline wavy; } .rests-on, .contest { color: var(--muted); }
.k-quarantined { border-left-style: dashed !important; }
ol.history { padding-left: 1.2rem; margin: .3rem 0; } ol.history li { margin: 0 0 .6rem; }
ul.downloads { padding-left: 1.2rem; margin: .3rem 0; }
.page-nav { display: flex; flex-wrap: wrap; gap: .5rem 1rem; margin: 1rem 0; }
${light}
@media (prefers-color-scheme: dark) {
${dark}
}
`;

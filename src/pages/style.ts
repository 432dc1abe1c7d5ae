/** The one stylesheet of the customer pages, served at /account/assets/style.css (CSP: 'self' only). */
export const STYLESHEET = `
:root { --ink: #1d2330; --muted: #5b6475; --line: #dde1e8; --bg: #f4f6f9; --card: #fff;
  --accent: #2457d6; --accent-ink: #fff; --danger: #b42318; --ok: #067647; --warn-bg: #fff6e5; --warn: #8a5a00; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--ink); background: var(--bg); }
.top { display: flex; align-items: center; justify-content: space-between; gap: 1rem;
  padding: .75rem 1.5rem; background: var(--card); border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; color: var(--ink); text-decoration: none; letter-spacing: .02em; }
.who { display: flex; align-items: center; gap: .75rem; color: var(--muted); font-size: .9rem; }
.who form { margin: 0; }
.who button.link { white-space: nowrap; }
main { max-width: 54rem; margin: 2rem auto; padding: 0 1rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 1.5rem 1.75rem;
  margin-bottom: 1.25rem; }
.narrow { max-width: 26rem; margin-left: auto; margin-right: auto; }
h1 { font-size: 1.5rem; margin: 0 0 .75rem; }
h2 { font-size: 1.15rem; margin: 0 0 .25rem; }
p { margin: .5rem 0; }
.muted { color: var(--muted); font-size: .9rem; }
.lead { font-size: 1.1rem; }
label { display: block; font-weight: 600; margin: .9rem 0 .3rem; }
input[type=email], input[type=password], input[type=text] { width: 100%; padding: .6rem .7rem; font: inherit;
  border: 1px solid var(--line); border-radius: 6px; }
input:focus, button:focus { outline: 2px solid var(--accent); outline-offset: 2px; }
button { font: inherit; cursor: pointer; border-radius: 6px; padding: .55rem 1.1rem; border: 1px solid var(--line);
  background: var(--card); color: var(--ink); }
button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-ink); font-weight: 600; }
button.danger { color: var(--danger); border-color: #f1c0bb; }
button.link { border: 0; background: none; padding: 0; color: var(--accent); text-decoration: underline; }
.actions { display: flex; gap: .75rem; margin-top: 1.25rem; flex-wrap: wrap; }
.actions form { margin: 0; }
.full { width: 100%; margin-top: 1.25rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1.25rem; margin: 1rem 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
code, .key { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
.site { font-weight: 700; }
.notice, .error, .warning { border-radius: 8px; padding: .7rem .9rem; margin: .75rem 0; }
.notice { background: #e8f5ee; color: var(--ok); }
.error { background: #fdecea; color: var(--danger); }
.warning { background: var(--warn-bg); color: var(--warn); }
.badge { display: inline-block; font-size: .8rem; font-weight: 600; padding: .1rem .55rem; border-radius: 999px;
  background: #e8f5ee; color: var(--ok); vertical-align: middle; }
.badge.off { background: #eef0f3; color: var(--muted); }
.badge.bad { background: #fdecea; color: var(--danger); }
.license-head { display: flex; justify-content: space-between; align-items: baseline; gap: 1rem; flex-wrap: wrap; }
table { width: 100%; border-collapse: collapse; margin-top: .75rem; font-size: .93rem; }
th, td { text-align: left; padding: .5rem .4rem; border-top: 1px solid var(--line); vertical-align: middle; }
th { color: var(--muted); font-weight: 600; }
td form { margin: 0; }
/* Deactivate and Move stacked in one cell: apart enough to aim at either. */
td form + form { margin-top: .4rem; }
td.when { white-space: nowrap; }
.table-wrap { overflow-x: auto; }
button.small { padding: .3rem .7rem; font-size: .9rem; }
.account-nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem .5rem; margin: 0 0 1.25rem; padding: 0; }
.account-nav a { display: inline-block; padding: .35rem .75rem; border-radius: 999px; color: var(--ink);
  text-decoration: none; border: 1px solid var(--line); background: var(--card); }
.account-nav a[aria-current=page] { border-color: currentColor; font-weight: 600; }
input[readonly] { background: var(--bg); color: var(--muted); }
.subscription form.actions { align-items: center; }
.subscription form.actions p { flex: 1 1 16rem; margin: 0; }
.card-choice select { padding: .5rem .6rem; font: inherit; border: 1px solid var(--line); border-radius: 8px;
  background: var(--card); color: var(--ink); max-width: 100%; }
.card-choice select:focus { outline: 2px solid var(--accent); outline-offset: 2px; }
ul.cards { list-style: none; margin: 0; padding: 0; }
ul.cards li { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between;
  padding: .75rem 0; border-top: 1px solid var(--line); }
ul.cards form { margin: 0; }
.why { color: var(--muted); font-size: .9rem; }
/* A license's transfer (My licenses): a disclosure, so the card stays short until it is opened. */
.transfer { margin-top: 1rem; }
.transfer summary { cursor: pointer; color: var(--accent); font-weight: 600; padding: .25rem 0; }
.transfer summary:focus { outline: 2px solid var(--accent); outline-offset: 2px; }
.transfer form { margin-top: .5rem; }
label.check { display: flex; gap: .5rem; align-items: center; margin-top: .75rem; font-weight: 400; }
label.check input { width: auto; margin: 0; }
/* Tiers to move a license to: one radio card each, the whole card its label. */
fieldset.tiers { border: 0; margin: 1rem 0 0; padding: 0; }
fieldset.tiers legend { font-weight: 600; margin-bottom: .5rem; }
.tier-option { position: relative; margin: .5rem 0; }
.tier-option input { position: absolute; left: 1rem; top: 1.1rem; margin: 0; }
.tier-option label { display: grid; gap: .2rem; margin: 0; padding: .8rem 1rem .8rem 2.6rem; font-weight: 400;
  border: 1px solid var(--line); border-radius: 8px; cursor: pointer; }
.tier-option input:checked + label { border-color: var(--accent); box-shadow: 0 0 0 1px var(--accent); }
.tier-option input:focus-visible + label { outline: 2px solid var(--accent); outline-offset: 2px; }
.tier-name { font-weight: 600; }
/* A table whose rows become cards on a narrow screen, each cell under its column's name (data-label):
   nothing scrolls sideways at 390 px. The header row stays for screen readers. */
@media (max-width: 40rem) {
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.stack, table.stack tbody, table.stack tr { display: block; }
  table.stack tr { border-top: 1px solid var(--line); padding: .6rem 0; }
  table.stack td { display: grid; grid-template-columns: 7.5rem minmax(0, 1fr); gap: .75rem; border: 0;
    padding: .2rem 0; overflow-wrap: anywhere; }
  table.stack td::before { content: attr(data-label); color: var(--muted); font-weight: 600; }
  table.stack td.when { white-space: normal; }
}
`;

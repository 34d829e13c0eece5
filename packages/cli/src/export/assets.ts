/**
 * The HTML view's inline style and script (`html.ts`). The script only shows and hides entries
 * the host rendered: clicking a row of the tree shows the branch through that entry, from its
 * root down to the latest entry under it (following the last-written child, as loading a
 * session picks the leaf). It reads `data-*` attributes and sets `hidden` and classes — never
 * `innerHTML` — so nothing in a session can become markup.
 */

export const PAGE_STYLE = `
:root { color-scheme: light dark; --fg: #1d2025; --bg: #fbfbfa; --muted: #6a6f78; --line: #d9dbe0; --accent: #3b6fd8; --err: #c0392b; --ok: #2e8b57; }
@media (prefers-color-scheme: dark) { :root { --fg: #e4e6ea; --bg: #16181c; --muted: #9aa0aa; --line: #30343b; --accent: #7aa2f7; --err: #f7768e; --ok: #9ece6a; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { padding: 12px 20px; border-bottom: 1px solid var(--line); }
h1 { margin: 0 0 4px; font-size: 18px; }
h2 { margin: 0 0 8px; font-size: 14px; color: var(--muted); }
h3 { margin: 0 0 6px; font-size: 13px; font-weight: 600; }
.meta, time, .id { color: var(--muted); font-size: 12px; font-weight: normal; }
.layout { display: grid; grid-template-columns: minmax(240px, 30%) 1fr; min-height: calc(100vh - 90px); }
nav { border-right: 1px solid var(--line); padding: 12px; overflow: auto; max-height: calc(100vh - 90px); position: sticky; top: 0; }
main { padding: 12px 20px; overflow-wrap: anywhere; }
ol.tree { list-style: none; margin: 0; padding: 0; }
ol.tree li { padding-left: calc(var(--depth) * 14px); }
button { font: inherit; color: inherit; cursor: pointer; }
button.node { display: block; width: 100%; text-align: left; background: none; border: 0; border-left: 2px solid transparent; padding: 2px 6px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
button.node:hover { background: color-mix(in srgb, var(--accent) 10%, transparent); }
button.node.on-branch { border-left-color: var(--accent); }
button.node.selected { background: color-mix(in srgb, var(--accent) 20%, transparent); }
.kind { display: inline-block; min-width: 5em; font-size: 11px; text-transform: uppercase; color: var(--muted); }
.kind-user { color: var(--accent); } .kind-assistant { color: var(--ok); } .kind-error { color: var(--err); } .kind-decision { color: #b8860b; }
.label, .fork { font-size: 11px; border: 1px solid var(--line); border-radius: 8px; padding: 0 5px; }
article.entry { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; margin: 0 0 10px; }
article.entry.selected { border-color: var(--accent); }
.text { white-space: pre-wrap; }
.md > :first-child { margin-top: 0; } .md > :last-child { margin-bottom: 0; }
.md h1, .md h2, .md h3, .md h4 { margin: 10px 0 4px; font-size: 15px; }
.md table { border-collapse: collapse; margin: 6px 0; } .md th, .md td { border: 1px solid var(--line); padding: 2px 8px; text-align: left; }
.md code { font-size: 12px; background: color-mix(in srgb, var(--fg) 6%, transparent); padding: 0 3px; border-radius: 3px; } .md pre code { padding: 0; background: none; }
.md a { color: var(--accent); }
pre { white-space: pre-wrap; margin: 4px 0; padding: 6px 8px; background: color-mix(in srgb, var(--fg) 6%, transparent); border-radius: 4px; font-size: 12px; }
details { margin: 6px 0; } summary { cursor: pointer; color: var(--muted); }
details.tool-call, details.tool-result { border-left: 3px solid var(--line); padding-left: 8px; }
details.tool-result.error, .error { color: var(--err); }
details.child-session { margin: 4px 0 4px 16px; border-left: 3px double var(--line); padding-left: 8px; }
details.child-session > .entry { margin: 6px 0; }
.verdict b { font-weight: 600; }
ul.decided { margin: 4px 0; padding-left: 18px; font-size: 12px; }
img { max-width: 100%; }
`;

export const PAGE_SCRIPT = `
(() => {
  const main = document.querySelector("main");
  const entries = new Map();
  const children = new Map();
  for (const a of document.querySelectorAll("article.entry")) entries.set(a.dataset.id, a);
  for (const [id, a] of entries) {
    const parent = entries.has(a.dataset.parent) ? a.dataset.parent : "";
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(id);
  }
  const rows = new Map();
  for (const b of document.querySelectorAll("button.node")) rows.set(b.dataset.id, b);
  function show(id) {
    const seen = new Set();
    let leaf = id;
    for (;;) {
      const kids = children.get(leaf);
      if (!kids || kids.length === 0 || seen.has(leaf)) break;
      seen.add(leaf);
      leaf = kids[kids.length - 1];
    }
    const on = new Set();
    for (let x = leaf; x && entries.has(x) && !on.has(x); x = entries.get(x).dataset.parent) on.add(x);
    for (const [k, a] of entries) { a.hidden = !on.has(k); a.classList.toggle("selected", k === id); }
    for (const [k, b] of rows) { b.classList.toggle("on-branch", on.has(k)); b.classList.toggle("selected", k === id); }
    main.dataset.leaf = leaf;
    const target = entries.get(id);
    if (target && target.scrollIntoView) target.scrollIntoView({ block: "nearest" });
  }
  document.querySelector("nav").addEventListener("click", (event) => {
    const b = event.target.closest("button.node");
    if (b) show(b.dataset.id);
  });
  for (const b of document.querySelectorAll("button[data-action]")) {
    b.addEventListener("click", () => {
      const open = b.dataset.action === "expand";
      for (const d of main.querySelectorAll("details")) d.open = open;
    });
  }
})();
`;

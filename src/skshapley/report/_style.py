"""The report's stylesheet (inlined in the page: no fonts or files to fetch)."""

CSS = """
:root {
  --text: #1f2328; --muted: #59636e; --faint: #818b98; --line: #d8dee4;
  --soft: #f6f8fa; --accent: #0969da; --pos: #d62846; --neg: #1a76cf;
  --bar: #a7b4c2;
  --sans: -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue",
    "Noto Sans", "Liberation Sans", Arial, sans-serif;
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas,
    "Liberation Mono", "DejaVu Sans Mono", monospace;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; background: #fff; color: var(--text); font-family: var(--sans);
  font-size: 15px; line-height: 1.55; overflow-wrap: break-word;
}
/* The layout has no fixed widths: from a phone (390 px) to a wide screen,
   grids and rows of figures choose their number of columns, images shrink
   with their column and tables too wide for it scroll inside it. */
.wrap { max-width: 1200px; margin: 0 auto; padding: 0 clamp(16px, 4vw, 32px); }
header.page { border-bottom: 1px solid var(--line); background: var(--soft); }
header.page .wrap { padding-top: 36px; padding-bottom: 20px; }
.eyebrow {
  margin: 0 0 6px; color: var(--accent); font-size: 12px; font-weight: 600;
  letter-spacing: .08em; text-transform: uppercase;
}
h1 { margin: 0 0 6px; font-size: 28px; line-height: 1.25; font-weight: 650; }
.meta { margin: 0; color: var(--muted); font-size: 14px; }
nav.toc { display: flex; flex-wrap: wrap; gap: 4px 22px; margin-top: 16px; }
nav.toc a { color: var(--muted); font-size: 14px; text-decoration: none; }
nav.toc a:hover { color: var(--accent); }
main { padding-bottom: 48px; }
section { margin-top: 40px; }
h2 {
  margin: 0 0 6px; padding-bottom: 8px; border-bottom: 1px solid var(--line);
  font-size: 20px; font-weight: 650;
}
h3 { margin: 0 0 2px; font-size: 15px; font-weight: 600; }
p { margin: 8px 0; }
.lead { margin: 10px 0 18px; color: var(--muted); max-width: 78ch; }
.note { color: var(--muted); font-size: 13.5px; }
code, .mono { font-family: var(--mono); font-size: .9em; }
code { padding: 1px 5px; border-radius: 4px; background: var(--soft); }
a { color: var(--accent); }

.cards {
  display: grid;
  grid-template-columns: repeat(auto-fit, minmax(min(100%, 160px), 1fr));
  gap: 14px; margin: 18px 0 22px;
}
.card { border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
.card .label {
  color: var(--muted); font-size: 12px; font-weight: 600;
  letter-spacing: .04em; text-transform: uppercase;
}
.card .value {
  margin-top: 2px; font-size: 22px; font-weight: 600;
  font-variant-numeric: tabular-nums;
}
.card .detail { color: var(--muted); font-size: 13px; }

.scroll { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td {
  padding: 6px clamp(6px, 1.5vw, 12px); text-align: left; vertical-align: baseline;
}
thead th {
  border-bottom: 2px solid var(--line); color: var(--muted); font-size: 13px;
  font-weight: 600; white-space: nowrap;
}
tbody td { border-bottom: 1px solid var(--line); }
tbody tr:last-child td { border-bottom: 0; }
.num { text-align: right; white-space: nowrap; }
.columns {
  display: grid; gap: 12px 40px;
  grid-template-columns: repeat(auto-fit, minmax(min(100%, 320px), 1fr));
}
.columns h3 { margin: 4px 0 6px; }
table.facts { width: 100%; font-size: 14px; }
table.facts th {
  width: 38%; padding-left: 0; border-bottom: 1px solid var(--line);
  color: var(--muted); font-weight: 500;
}
table.facts td { border-bottom: 1px solid var(--line); }
table.facts tr:last-child th, table.facts tr:last-child td { border-bottom: 0; }
table.importance { min-width: 72%; margin-top: 4px; }
table.importance td.feature {
  font-family: var(--mono); font-size: 13.5px; overflow-wrap: anywhere;
}
table.importance td.share {
  width: 34%; min-width: clamp(48px, 15vw, 140px); vertical-align: middle;
}
table.importance th:first-child, table.importance td:first-child { padding-left: 0; }
.bar { display: block; height: 10px; border-radius: 2px; background: var(--soft); }
.bar > span {
  display: block; height: 100%; border-radius: 2px; background: var(--bar);
}
.pos { color: var(--pos); }
.neg { color: var(--neg); }
.rest td { color: var(--muted); font-style: italic; }

/* Rows of figures: each card as wide as its image and no wider (no white
   inside it), side by side while each can be at least --column wide (two or
   three in a row), shrunk to the row's width otherwise. */
.figures {
  display: flex; flex-wrap: wrap; align-items: flex-start; gap: 20px;
  margin-top: 16px;
}
.figures.two { --column: 440px; }
.figures.three { --column: 330px; }
.figures > figure {
  flex: 1 1 0; min-width: min(100%, var(--column, 0px)); max-width: max-content;
}
figure {
  margin: 0; padding: 10px 10px 8px; border: 1px solid var(--line);
  border-radius: 8px; break-inside: avoid;
}
/* Never wider than the column, never larger than drawn: scaled up, a
   figure's text would outgrow the page's. */
figure img { display: block; max-width: 100%; height: auto; margin: 0 auto; }
/* A caption wraps to its figure's width instead of widening it. */
figcaption {
  margin: 8px 4px 0; color: var(--muted); font-size: 13.5px; contain: inline-size;
}
figcaption strong { color: var(--text); font-weight: 600; }

/* The notes beside the software's versions where both fit, else above. */
.columns.about { display: flex; flex-wrap: wrap; gap: 12px 48px; }
.columns.about > dl { flex: 999 1 min(100%, 36ch); }
.columns.about > aside { flex: 0 1 300px; }
.columns.loo { margin-top: 22px; }
ul.reading { margin: 4px 0 8px; padding-left: 20px; }
ul.reading li { margin-bottom: 6px; }
dl.notes { max-width: 76ch; margin: 4px 0 0; }
dl.notes dt { margin-top: 14px; font-weight: 600; }
dl.notes dt:first-child { margin-top: 6px; }
dl.notes dd { margin: 2px 0 0; }
aside h3 { margin-top: 20px; }
table.versions { width: 100%; font-size: 14px; }
table.versions th:first-child, table.versions td:first-child { padding-left: 0; }
footer {
  margin-top: 24px; padding: 18px 0 36px; border-top: 1px solid var(--line);
  color: var(--faint); font-size: 13px;
}
/* Printing (or "print to PDF"): black text, no navigation, nothing split
   across pages, link targets written out. */
@media print {
  @page { margin: 14mm 12mm; }
  :root { --text: #000; --muted: #000; --faint: #333; --accent: #000; }
  body { font-size: 10.5pt; }
  .wrap { max-width: none; padding: 0; }
  header.page { background: none; }
  header.page .wrap { padding-top: 0; }
  nav.toc { display: none; }
  section { margin-top: 24px; }
  h2, h3 { break-after: avoid; }
  figure, .card, tr { break-inside: avoid; }
  .scroll { overflow: visible; }
  a { text-decoration: underline; }
  a[href^="http"]::after { content: " (" attr(href) ")"; font-size: 90%; }
  /* Backgrounds carry meaning here (the table's bars): print them. */
  .bar, .bar > span, code {
    -webkit-print-color-adjust: exact; print-color-adjust: exact;
  }
}
"""

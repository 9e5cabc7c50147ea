import type { Language } from '../../generated/errors.js';
import { uiText } from '../../generated/ui-text.js';
import { PLAYGROUND_CREDITS } from './users.js';

/** The pages' own policy: scripts and styles from /console/assets only. */
export const PAGE_CSP =
  "default-src 'self'; img-src 'self' data:; media-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

/** A JSON data block is never run, so the CSP's script-src does not apply; `<` is escaped so no text can close the element. */
function dataBlock(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

/** One page in one language: the shell, its texts as data for the page script, and the script. */
export function page(language: Language, kind: 'playground' | 'console', hasCss: boolean): string {
  const texts = uiText(language);
  const title = kind === 'playground' ? texts['nav.playground'] : texts['nav.console'];
  return `<!doctype html>
<html lang="${language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · mediaforge</title>
<link rel="stylesheet" href="/console/assets/base.css">${hasCss ? `\n<link rel="stylesheet" href="/console/assets/${kind}.css">` : ''}
<script type="application/json" id="ui-text">${dataBlock(texts)}</script>
</head><body data-playground-credits="${PLAYGROUND_CREDITS}">
<header><strong>mediaforge</strong> <nav><a href="/playground">${escapeHtml(texts['nav.playground'])}</a> <a href="/console">${escapeHtml(texts['nav.console'])}</a> <a href="/docs/">${escapeHtml(texts['nav.docs'])}</a></nav><span id="who"></span></header>
<main id="app"><p>${escapeHtml(texts['common.loading'])}</p></main>
<script type="module" src="/console/assets/${kind}.js"></script>
</body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

/**
 * Both pages' styles. `.deployment-state`: one colour per state of a deployment in the operator
 * console (web/deployment-state.ts), from green (ok) to red (down); a state without a rule here
 * keeps the white outlined badge with a dashed border, never a colour that says it is fine.
 * The statement (web/console-statement.ts): figures right-aligned, totals bold, debts (owed, not
 * taken) grey; `@media print` leaves the statement alone on paper: no header, navigation, buttons,
 * picker or other section.
 */
export const BASE_CSS = `body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{display:flex;gap:1.5rem;align-items:center;padding:.6rem 1.2rem;background:#1b1f24;color:#fff}header a{color:#cfe3ff;margin-right:.8rem}#who{margin-left:auto;font-size:.9em}
main{max-width:1100px;margin:1rem auto;padding:0 1rem}section{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:1rem 1.2rem;margin:0 0 1rem}
h2{margin:.2rem 0 .8rem;font-size:1.15rem}label{display:block;margin:.5rem 0 .15rem;font-weight:600}small.hint{display:block;color:#5b6570;font-weight:400}
input[type=text],input[type=email],input[type=password],input[type=number],input[type=date],select,textarea{width:100%;box-sizing:border-box;padding:.4rem;border:1px solid #b9c0c8;border-radius:5px;font:inherit}
textarea{min-height:4.5rem}button{padding:.45rem .9rem;border-radius:5px;border:1px solid #2c5fb8;background:#2f6fde;color:#fff;font:inherit;cursor:pointer}button.secondary{background:#fff;color:#2f6fde}
.error{color:#b00020;font-size:.9em}.field-error input,.field-error select,.field-error textarea{border-color:#b00020}.secret{font-family:monospace;background:#fff8d6;padding:.4rem;word-break:break-all}
table{border-collapse:collapse;width:100%;font-size:.9em}td,th{border-bottom:1px solid #e4e7eb;padding:.3rem .4rem;text-align:left}.row{display:flex;gap:1rem;flex-wrap:wrap}.row>*{flex:1 1 280px}
.badge{display:inline-block;padding:.05rem .45rem;border-radius:9px;background:#e8eef9;font-size:.85em}.badge.off{background:#eee;color:#6b737b}
.deployment-state{white-space:nowrap;background:#fff;color:#1b1f24;border:1px dashed #6b737b}.deployment-state[data-state=ok]{background:#d8f3de;color:#1b5e2b;border:1px solid #9fd6ad}
.deployment-state[data-state=degraded]{background:#fff0b3;color:#6b4f00;border:1px solid #e6c84d}.deployment-state[data-state=cooling]{background:#cfeffa;color:#055a73;border:1px solid #7fcde6}
.deployment-state[data-state=half-open]{background:#eadcff;color:#4a2a85;border:1px solid #bba0ea}.deployment-state[data-state=full]{background:#ffdcc2;color:#7a3300;border:1px solid #f0a673}
.deployment-state[data-state=down]{background:#b3261e;color:#fff;border:1px solid #8c1d17}.deployment-state[data-state="no record"]{background:#eceef1;color:#59626b;border:1px solid #c9ced4}
.upload{margin:.3rem 0}.upload-label{display:inline;font-weight:400;margin-right:.5rem}.upload-status{font-size:.9em;color:#2d6a3a}.thumb{vertical-align:middle;border-radius:3px}p.hint{color:#5b6570;font-size:.9em}video{max-width:100%;background:#000;border-radius:6px}
.statement-actions{display:flex;gap:1rem;align-items:center;flex-wrap:wrap;margin-bottom:.6rem}input[type=month]{padding:.35rem;border:1px solid #b9c0c8;border-radius:5px;font:inherit}
#statement-table{max-width:40rem}#statement-table .num{text-align:right;font-variant-numeric:tabular-nums}#statement-table tr.total td{font-weight:600}#statement-table tr.info td{color:#5b6570}
@media print{header,nav,button,.statement-controls,main>section:not(#statement){display:none!important}body{background:#fff}main{max-width:none;margin:0;padding:0}#statement{border:0;padding:0}}`;

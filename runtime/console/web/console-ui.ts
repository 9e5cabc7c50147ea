/** Building blocks of the console's sections: titled sections, tables, buttons that report their errors, secrets shown once. */
import type { UiTextKey } from '../../../generated/ui-text.js';
import { errorText, h, t } from './common.js';

export const sections = new Map<string, HTMLElement>();

export function section(id: string, title: UiTextKey): HTMLElement {
  const body = h('div', { id: `${id}-body` });
  sections.set(id, body);
  return h('section', { id }, h('h2', { text: t(title) }), body);
}

export function body(id: string): HTMLElement {
  return sections.get(id)!;
}

/** Headers are text keys; '' is a column without a heading (actions). */
export function table(headers: (UiTextKey | '')[], rows: (Node | string)[][], id: string): HTMLTableElement {
  return h(
    'table',
    { id },
    h('thead', {}, h('tr', {}, ...headers.map((x) => h('th', { text: x ? t(x) : '' })))),
    h('tbody', {}, ...rows.map((r) => h('tr', {}, ...r.map((c) => h('td', {}, c))))),
  );
}

/** A button that runs `run` once at a time and shows its error next to itself. */
export function button(text: string, id: string, run: () => Promise<void>, secondary = false): HTMLButtonElement {
  const b = h('button', { id, text, class: secondary ? 'secondary' : '' });
  const message = h('span', { class: 'error', id: `${id}-error` });
  b.onclick = async () => {
    b.disabled = true;
    message.textContent = '';
    try {
      await run();
    } catch (error) {
      message.textContent = ` ${errorText(error)}`;
      b.after(message);
    } finally {
      b.disabled = false;
    }
  };
  return b;
}

/** A button that asks once more before it runs (no window.confirm: it blocks the page). */
export function confirmButton(
  text: string,
  confirmText: string,
  id: string,
  run: () => Promise<void>,
): HTMLButtonElement {
  let armed = false;
  const b = button(
    text,
    id,
    async () => {
      if (!armed) {
        armed = true;
        b.textContent = confirmText;
        b.dataset.armed = 'true';
        return;
      }
      await run();
    },
    true,
  );
  return b;
}

/** A secret shown once: in the page until it is reloaded, never retrievable again. */
export function showOnce(slot: HTMLElement, label: string, secret: string, id: string) {
  slot.replaceChildren(
    h('p', { text: t('console.shownOnce', { label }) }),
    h('div', { class: 'secret', id, text: secret }),
  );
}

export function dateTime(iso: string): string {
  return iso.slice(0, 19).replace('T', ' ');
}

/**
 * The monthly statement as a printable section (issue 39 point 7): a month picker (the current UTC
 * month by default, none later: the service refuses a month not begun yet, 40044), the statement of
 * the user's API account as a table, its CSV through consoleStatement's format=csv (a plain link:
 * the session cookie goes with it, and the answer is a download), and a print button. Printing shows
 * this section alone (BASE_CSS's `@media print`, runtime/console/pages.ts).
 */
import type { ApiData } from './api.js';
import { api, errorText, h, t } from './common.js';

type Statement = ApiData<'/console/api/statements/{month}', 'get'>;

/** The current month in UTC as `<input type=month>` holds it (`YYYY-MM`): statements are by UTC month. */
function currentMonth(): string {
  return new Date().toISOString().slice(0, 7);
}

/**
 * One line of the table. `item` is the line's `section.item` in the CSV (data-item), so a reader of
 * both (and the browser test) can match them; a total is drawn bold, a figure that does not enter
 * the identity (a debt: owed, not taken) in grey.
 */
function line(
  item: string,
  label: string,
  credits: number,
  options: { tasks?: number; kind?: 'total' | 'info' } = {},
): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-item': item, class: options.kind ?? '' },
    h('td', { text: label }),
    h('td', { class: 'num', text: options.tasks === undefined ? '' : String(options.tasks) }),
    h('td', { class: 'num', text: String(credits) }),
  );
}

function statementTable(s: Statement): HTMLTableElement {
  const tasks = s.charges.byModel.reduce((sum, m) => sum + m.tasks, 0);
  return h(
    'table',
    { id: 'statement-table' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { text: t('statement.colItem') }),
        h('th', { class: 'num', text: t('usage.colTasks') }),
        h('th', { class: 'num', text: t('usage.colCredits') }),
      ),
    ),
    h(
      'tbody',
      {},
      line('openingBalance', t('statement.opening'), s.openingBalance, { kind: 'total' }),
      line('purchases.paid', t('statement.paid'), s.purchases.paid),
      line('purchases.granted', t('statement.granted'), s.purchases.granted),
      line('purchases.total', t('statement.purchases'), s.purchases.total, { kind: 'total' }),
      line('refunds.refunded', t('statement.refunded'), s.refunds.refunded),
      line('refunds.disputed', t('statement.disputed'), s.refunds.disputed),
      line('refunds.disputesWon', t('statement.disputesWon'), s.refunds.disputesWon),
      line('refunds.debtPaid', t('statement.debtPaid'), s.refunds.debtPaid),
      line('refunds.total', t('statement.refunds'), s.refunds.total, { kind: 'total' }),
      // After the total: what was owed and cancelled moved no balance (docs/statements.md).
      line('refunds.debtIncurred', t('statement.debtIncurred'), s.refunds.debtIncurred, { kind: 'info' }),
      line('refunds.debtForgiven', t('statement.debtForgiven'), s.refunds.debtForgiven, { kind: 'info' }),
      ...s.charges.byModel.map((m) =>
        line(`charges.${m.model}`, t('statement.chargesModel', { model: m.model }), m.credits, { tasks: m.tasks }),
      ),
      line('charges.total', t('statement.charges'), s.charges.total, { tasks, kind: 'total' }),
      line('closingBalance', t('statement.closing'), s.closingBalance, { kind: 'total' }),
    ),
  );
}

export async function renderStatement(slot: HTMLElement): Promise<void> {
  const current = currentMonth();
  const month = h('input', { type: 'month', id: 'statement-month', value: current, max: current, required: true });
  const csv = h('a', { id: 'statement-csv', download: '', text: t('statement.csv') });
  const print = h('button', { type: 'button', id: 'statement-print', class: 'secondary', text: t('statement.print') });
  print.onclick = () => window.print();
  const figures = h('div', { id: 'statement-figures' });
  const show = async () => {
    const chosen = month.value;
    // A cleared picker keeps what is shown: there is no month to ask for.
    if (!/^\d{4}-\d{2}$/.test(chosen)) return;
    csv.setAttribute('href', `/console/api/statements/${chosen}?format=csv`);
    let nodes: HTMLElement[];
    try {
      const s = await api('get', '/console/api/statements/{month}', { params: { month: chosen } });
      nodes = [
        h('p', { id: 'statement-period', class: 'hint', text: t('statement.period', { month: s.month }) }),
        statementTable(s),
      ];
    } catch (error) {
      // A month typed past the picker's max: the service's refusal, in the page's language.
      nodes = [h('p', { class: 'error', id: 'statement-error', role: 'alert', text: errorText(error) })];
    }
    // Months picked in quick succession: only the last one's answer is shown.
    if (month.value !== chosen) return;
    figures.replaceChildren(...nodes);
    figures.dataset.month = chosen;
  };
  month.addEventListener('change', () => void show());
  slot.replaceChildren(
    h(
      'div',
      { class: 'statement-controls' },
      h('label', { for: 'statement-month', text: t('statement.month') }),
      h('div', { class: 'statement-actions' }, month, csv, print),
    ),
    figures,
  );
  await show();
}

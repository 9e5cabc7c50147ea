/**
 * The operator's sections of /console (a session whose role is `operator`), above the account's
 * own: deployments with their state (read again every few seconds while the page is visible) and
 * last failure, the margin report with its chart and its part by price book, accounts and users found by
 * email or id (balance, usage, keys with their policies, recent tasks; add credits with a note,
 * revoke a key, edit a key's policy, set the price book), and
 * the audit log. Every call is an operator operation of the contract (generated/console/types.ts).
 */
import type uPlot from 'uplot';
import { api, errorText, h, stateText, t } from './common.js';
import { loadChartLibrary } from './chart-library.js';
import { body, button, confirmButton, dateTime, section, table } from './console-ui.js';
import { deploymentStateBadge } from './deployment-state.js';
import { policyEditor, policySummary } from './key-policy-editor.js';
import { refreshWhileVisible } from './while-visible.js';

let marginChart: uPlot | undefined;

/** How often the deployments' states are read again while the page is visible (no page reload). */
const DEPLOYMENTS_REFRESH_MS = 5000;

type Account = Awaited<ReturnType<typeof api<'get', '/console/api/operator/accounts/{accountId}'>>>;

export function operatorSections(): HTMLElement[] {
  return [
    section('operator-deployments', 'operator.deployments'),
    section('operator-margin', 'operator.margin'),
    section('operator-accounts', 'operator.accounts'),
    section('operator-audit', 'operator.audit'),
  ];
}

export async function renderOperator(): Promise<void> {
  renderAccountSearch();
  await Promise.all([renderDeployments(), renderMargin(), renderAudit()]);
  refreshWhileVisible(refreshDeployments, DEPLOYMENTS_REFRESH_MS);
}

/** A refresh that fails (the service restarting, the session ended) says so under the last table it drew, and the next one tries again. */
async function refreshDeployments() {
  const slot = body('operator-deployments');
  try {
    await renderDeployments();
  } catch (error) {
    slot.querySelector('#operator-deployments-error')?.remove();
    slot.append(h('p', { class: 'error', id: 'operator-deployments-error', text: errorText(error) }));
  }
}

async function renderDeployments() {
  const deployments = await api('get', '/console/api/operator/deployments');
  body('operator-deployments').replaceChildren(
    table(
      [
        'operator.colDeployment',
        'operator.colState',
        'operator.colInFlight',
        'operator.colFailures',
        'operator.colLastFailure',
      ],
      deployments.map((d) => [
        `${d.name} (${d.kind})`,
        deploymentStateBadge(d.state, d.coolingUntil),
        `${d.inFlight}${d.maxInFlight === null ? '' : ` / ${d.maxInFlight}`}`,
        Object.entries(d.failures)
          .filter(([, n]) => n > 0)
          .map(([kind, n]) => `${kind} ${n}`)
          .join(', ') || '0',
        d.lastFailure ? `${d.lastFailure}${d.lastFailureAt ? ` (${dateTime(d.lastFailureAt)})` : ''}` : '',
      ]),
      'operator-deployments-table',
    ),
  );
}

async function renderMargin() {
  const report = await api('get', '/console/api/operator/margin');
  const slot = body('operator-margin');
  const holder = h('div', { id: 'margin-chart' });
  const totals = report.totals;
  slot.replaceChildren(
    holder,
    h('p', {
      id: 'margin-totals',
      text: t('operator.marginTotal', {
        tasks: totals.tasks,
        revenue: totals.revenueUsd,
        cost: totals.upstreamCostUsd,
        margin: totals.marginUsd,
      }),
    }),
    // Successes without a declared cost count 0: said, so the margin is never read as 100 % of the revenue.
    ...(totals.succeededWithoutCost > 0
      ? [
          h('p', {
            id: 'margin-uncosted',
            class: 'hint',
            text:
              totals.succeededWithoutCost === totals.succeeded && totals.upstreamCostUsd === '0.000000'
                ? t('operator.marginUnknown', { count: totals.succeededWithoutCost })
                : t('operator.marginUncosted', { count: totals.succeededWithoutCost }),
          }),
        ]
      : []),
    ...(totals.possiblyAbandoned > 0
      ? [
          h('p', {
            id: 'margin-possibly-abandoned',
            class: 'hint',
            text: t('operator.possiblyAbandoned', {
              count: totals.possiblyAbandoned,
              cost: totals.possiblyAbandonedCostUsd,
            }),
          }),
        ]
      : []),
    // By the book each task was accepted under, as `report margin` prints after its total.
    h(
      'ul',
      { id: 'margin-books' },
      ...report.books.map((b) =>
        h('li', {
          'data-book': b.book,
          text: t('operator.marginBook', {
            book: b.book,
            tasks: b.tasks,
            revenue: b.revenueUsd,
            cost: b.upstreamCostUsd,
            margin: b.marginUsd,
          }),
        }),
      ),
      ...report.belowCost.map((w) =>
        h('li', {
          class: 'warning',
          text: t('operator.marginBelowCost', {
            book: w.book,
            model: w.model,
            tasks: w.tasks,
            revenue: w.revenueUsd,
            cost: w.upstreamCostUsd,
          }),
        }),
      ),
    ),
  );
  // One bar group per model and deployment: revenue beside what the upstream cost.
  const rows = report.rows;
  const UPlot = await loadChartLibrary();
  // Revenue left of each model's tick, cost right of it.
  const bar = (align: -1 | 1) => UPlot.paths.bars?.({ size: [0.3, 50], align });
  marginChart?.destroy();
  marginChart = new UPlot(
    {
      width: Math.min(1000, (slot.clientWidth || 900) - 10),
      height: 240,
      title: t('operator.chartTitle'),
      scales: { x: { time: false, range: [-0.5, Math.max(rows.length, 1) - 0.5] } },
      axes: [
        {
          values: (_u: uPlot, splits: number[]) =>
            splits.map((i) => (Number.isInteger(i) && rows[i] ? `${rows[i].model} · ${rows[i].deployment}` : '')),
          splits: () => rows.map((_, i) => i),
        },
        { label: 'USD' },
      ],
      series: [
        {
          label: t('usage.colModel'),
          value: (_u: uPlot, i: number | null) => (i === null ? '' : (rows[i]?.model ?? '')),
        },
        { label: t('operator.revenue'), stroke: '#2f6fde', fill: 'rgba(47,111,222,.55)', paths: bar(-1) },
        { label: t('operator.cost'), stroke: '#d0782a', fill: 'rgba(208,120,42,.55)', paths: bar(1) },
      ],
    },
    [rows.map((_, i) => i), rows.map((r) => Number(r.revenueUsd)), rows.map((r) => Number(r.upstreamCostUsd))],
    holder,
  );
}

function renderAccountSearch() {
  const input = h('input', { type: 'text', id: 'operator-query', placeholder: t('operator.searchPlaceholder') });
  const results = h('div', { id: 'operator-results' });
  const detail = h('div', { id: 'operator-account' });
  const search = async () => {
    const accounts = await api('get', '/console/api/operator/accounts', { query: { q: input.value.trim() } });
    results.replaceChildren(
      accounts.length
        ? table(
            ['operator.colAccount', 'operator.colUsers', 'operator.colAvailable', ''],
            accounts.map((a) => [
              a.accountId,
              a.users.map((u) => `${u.email} (${u.wallet})`).join(', '),
              String(a.balance.available),
              button(t('operator.open'), `open-${a.accountId}`, () => showAccount(detail, a.accountId, search), true),
            ]),
            'operator-accounts-table',
          )
        : h('p', { class: 'hint', text: t('operator.none') }),
    );
  };
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') void search();
  });
  body('operator-accounts').replaceChildren(
    h('div', { class: 'row' }, input, button(t('operator.search'), 'operator-search', search)),
    results,
    detail,
  );
}

/**
 * What an account owes (a refund or dispute took back more than was available), with the button
 * that forgives it: shown only while something is owed. The note is the grant form's; the key is
 * the form's too (the two operations keep their references apart: `grant:` and `forgive:`).
 */
function forgiveDebtRow(
  slot: HTMLElement,
  accountId: string,
  owed: number,
  note: HTMLInputElement,
  formKey: string,
  refresh: () => Promise<void>,
): HTMLElement {
  if (owed <= 0) return h('p', { id: 'operator-debt' });
  return h(
    'p',
    { id: 'operator-debt' },
    confirmButton(
      t('operator.forgiveDebt', { owed }),
      `${t('operator.forgiveDebt', { owed })}?`,
      'forgive-debt',
      async () => {
        const done = await api('post', '/console/api/operator/accounts/{accountId}/forgive-debt', {
          params: { accountId },
          body: { note: note.value, idempotencyKey: formKey },
        });
        await showAccount(slot, accountId, refresh);
        slot.querySelector('#grant-done')!.textContent = ` ${t('operator.forgiven', { credits: done.forgiven })}`;
        await Promise.all([refresh(), renderAudit()]);
      },
    ),
  );
}

/**
 * The account's price book and a select of every name it may be assigned (the books, then
 * `default`): the same change and audit row as `mediaforge accounts set --price-book`.
 */
function priceBookRow(slot: HTMLElement, account: Account, refresh: () => Promise<void>): HTMLElement {
  const select = h(
    'select',
    { id: 'operator-price-book' },
    ...account.priceBooks.map((name) =>
      h('option', { value: name, text: name, ...(name === account.priceBook ? { selected: 'selected' } : {}) }),
    ),
  );
  return h(
    'p',
    {},
    h('label', { for: 'operator-price-book', text: t('operator.priceBook') }),
    select,
    button(t('operator.setPriceBook'), 'set-price-book', async () => {
      const set = await api('post', '/console/api/operator/accounts/{accountId}/price-book', {
        params: { accountId: account.accountId },
        body: { book: select.value },
      });
      await showAccount(slot, account.accountId, refresh);
      slot.querySelector('#price-book-done')!.textContent = ` ${t('operator.priceBookSet', { book: set.priceBook })}`;
      await renderAudit();
    }),
    h('span', { id: 'price-book-done' }),
  );
}

/** One account's detail; `refresh` runs the search again after a change, so its rows show the new balance. */
async function showAccount(slot: HTMLElement, accountId: string, refresh: () => Promise<void>): Promise<void> {
  const account: Account = await api('get', '/console/api/operator/accounts/{accountId}', { params: { accountId } });
  const credits = h('input', { type: 'number', id: 'grant-credits', min: 1, step: 1, value: '' });
  // The grant's idempotency key: made with the form, so every press of this form is one grant (the form is built anew after it).
  // (getRandomValues, not randomUUID: that one exists only in secure contexts, and a console may be served over plain http.)
  const grantKey = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join(
    '',
  );
  const note = h('input', { type: 'text', id: 'grant-note' });
  const done = h('span', { id: 'grant-done' });
  slot.replaceChildren(
    h('h3', { text: account.accountId }),
    h('p', { text: account.users.map((u) => `${u.email} (${u.role}, ${u.wallet})`).join(', ') }),
    h('p', { id: 'operator-balance', text: t('operator.balance', { ...account.balance }) }),
    h('p', {
      text: t('operator.usage', {
        days: account.usage.days,
        tasks: account.usage.tasks,
        credits: account.usage.credits,
      }),
    }),
    h('label', { for: 'grant-credits', text: t('operator.credits') }),
    credits,
    h('label', { for: 'grant-note', text: t('operator.note') }),
    note,
    h(
      'p',
      {},
      button(t('operator.addCredits'), 'grant', async () => {
        // One key per form: a double submit (or a retry after a lost answer) adds the credits once.
        const granted = await api('post', '/console/api/operator/accounts/{accountId}/credits', {
          params: { accountId },
          body: { credits: Number(credits.value), note: note.value, idempotencyKey: grantKey },
        });
        await showAccount(slot, accountId, refresh);
        slot.querySelector('#grant-done')!.textContent = ` ${t('operator.added', { credits: granted.added })}`;
        await Promise.all([refresh(), renderAudit()]);
      }),
      done,
    ),
    forgiveDebtRow(slot, accountId, account.balance.owed ?? 0, note, grantKey, refresh),
    priceBookRow(slot, account, refresh),
    table(
      ['keys.colKey', 'keys.colWorkspace', 'keys.colCreated', 'keys.colPolicy', ''],
      account.keys.map((k) => [
        `${k.prefix}…`,
        k.workspace,
        dateTime(k.createdAt),
        // The owner's summary and editor (key-policy-editor.ts), saved through the operator's operation.
        h(
          'div',
          { id: `operator-policy-${k.keyId}` },
          h('span', { class: 'key-policy', id: `operator-policy-summary-${k.keyId}`, text: policySummary(k.policy) }),
          k.revokedAt
            ? null
            : policyEditor(
                `operator-policy-${k.keyId}`,
                k,
                (policy) =>
                  api('put', '/console/api/operator/keys/{keyId}/policy', {
                    params: { keyId: k.keyId },
                    body: policy,
                  }),
                async () => {
                  await showAccount(slot, accountId, refresh);
                  await renderAudit();
                },
              ),
        ),
        k.revokedAt
          ? t('keys.revokedOn', { date: k.revokedAt.slice(0, 10) })
          : confirmButton(t('keys.revoke'), `${t('keys.revoke')}?`, `operator-revoke-${k.keyId}`, async () => {
              await api('post', '/console/api/operator/keys/{keyId}/revoke', { params: { keyId: k.keyId } });
              await showAccount(slot, accountId, refresh);
              await renderAudit();
            }),
      ]),
      'operator-keys-table',
    ),
    table(
      ['tasks.colTask', 'tasks.colModel', 'tasks.colState', 'tasks.colCredits', 'tasks.colCreated'],
      account.recentTasks.map((x) => [
        x.taskId,
        x.model,
        h('span', { class: 'badge', 'data-state': x.state, text: stateText(x.state) }),
        String(x.credits),
        dateTime(x.createdAt),
      ]),
      'operator-tasks-table',
    ),
  );
}

async function renderAudit() {
  const entries = await api('get', '/console/api/operator/audit');
  body('operator-audit').replaceChildren(
    table(
      [
        'operator.colWhen',
        'operator.colWho',
        'operator.colAddress',
        'operator.colAction',
        'operator.colTarget',
        'operator.colDetails',
      ],
      entries.map((e) => [
        dateTime(e.createdAt),
        e.actorEmail ?? e.actor,
        e.clientAddress ?? '',
        e.action,
        e.target ?? '',
        JSON.stringify(e.details),
      ]),
      'operator-audit-table',
    ),
  );
}

/** /console: an operator's sections first (console-operator.ts), then balance (and the account id), usage chart (uPlot), the monthly statement (console-statement.ts), keys, team keys, webhooks, deliveries, settings, tasks. */
import type uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { LANGUAGE_NAMES } from '../../../generated/ui-text.js';
import { api, CallError, ensureSession, errorText, h, stateText, t, tNodes, type Session } from './common.js';
import { loadChartLibrary } from './chart-library.js';
import { body, button, dateTime, section, showOnce, table } from './console-ui.js';
import { renderDeliveries, renderWebhooks } from './console-webhooks.js';
import { operatorSections, renderOperator } from './console-operator.js';
import { renderPayments } from './console-payments.js';
import { policyEditor, policyFields, policySummary } from './key-policy-editor.js';
import { renderStatement } from './console-statement.js';

let chart: uPlot | undefined;

async function renderUsage() {
  const slot = body('usage');
  const usage = await api('get', '/console/api/usage');
  const holder = h('div', { id: 'usage-chart' });
  slot.replaceChildren(
    holder,
    table(
      ['usage.colModel', 'usage.colTasks', 'usage.colCredits'],
      usage.byModel.map((m) => [m.model, String(m.tasks), String(m.credits)]),
      'usage-by-model',
    ),
  );
  const xs = usage.byDay.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000);
  const UPlot = await loadChartLibrary();
  chart?.destroy();
  chart = new UPlot(
    {
      width: Math.min(1000, (slot.clientWidth || 900) - 10),
      height: 220,
      title: t('usage.chartTitle'),
      series: [
        { label: t('usage.day') },
        { label: t('wallet.api'), stroke: '#2f6fde', fill: 'rgba(47,111,222,.15)' },
        { label: t('wallet.playground'), stroke: '#d0782a', fill: 'rgba(208,120,42,.15)' },
      ],
      axes: [{}, { label: t('usage.axisCredits') }],
    },
    [xs, usage.byDay.map((d) => d.api), usage.byDay.map((d) => d.playground)],
    holder,
  );
}

async function renderBalance(session: Session) {
  const b = await api('get', '/console/api/balance');
  const slot = body('balance');
  // Buying credits sits under the balance (console-payments.ts); a refresh of the figures keeps it.
  const payments = slot.querySelector<HTMLElement>('#payments') ?? h('div', { id: 'payments' });
  slot.replaceChildren(
    h('p', { class: 'hint', id: 'account-id', text: t('console.accountId', { accountId: session.accountId }) }),
    h(
      'p',
      {},
      ...tNodes('balance.summary', {
        api: h('strong', { id: 'api-balance', text: String(b.api.available) }),
        held: b.api.held,
        playground: h('strong', { id: 'playground-balance', text: String(b.playground.available) }),
      }),
    ),
    ...lowBalanceNodes(session, b.lowBalance, b.api.available),
    payments,
  );
}

/** The banner while the API balance is below the account's alert threshold, and the threshold's setting. */
function lowBalanceNodes(
  session: Session,
  low: { thresholdCredits: number | null; low: boolean },
  available: number,
): HTMLElement[] {
  const threshold = h('input', {
    type: 'number',
    id: 'low-balance',
    min: '1',
    step: '1',
    value: low.thresholdCredits === null ? '' : String(low.thresholdCredits),
  });
  const saved = h('span', { id: 'low-balance-saved' });
  return [
    ...(low.low
      ? [
          h('p', {
            class: 'error',
            id: 'low-balance-banner',
            role: 'alert',
            text: t('balance.lowBanner', { available, threshold: low.thresholdCredits ?? 0 }),
          }),
        ]
      : []),
    h(
      'label',
      { for: 'low-balance', text: t('balance.lowThreshold') },
      h('small', { class: 'hint', text: t('balance.lowThresholdHint') }),
    ),
    h(
      'div',
      { class: 'row' },
      threshold,
      button(t('settings.save'), 'save-low-balance', async () => {
        const value = threshold.value.trim();
        await api('post', '/console/api/settings', {
          body: { lowBalanceCredits: value === '' ? null : Number(value) },
        });
        await renderBalance(session);
        body('balance').querySelector('#low-balance-saved')!.textContent = ` ${t('settings.saved')}`;
      }),
      saved,
    ),
  ];
}

async function renderKeys() {
  const slot = body('keys');
  const keys = await api('get', '/console/api/keys');
  const team = h('input', { type: 'text', id: 'team-name', placeholder: t('keys.teamPlaceholder') });
  // The new key's policy (key-policy-editor.ts): what is filled is sent with the key, checked as an edit is.
  const newPolicy = policyFields('new-key-policy');
  const create = (teamName?: string) => async () => {
    const policy = newPolicy.read();
    newPolicy.showError('');
    let created: Awaited<ReturnType<typeof api<'post', '/console/api/keys'>>>;
    try {
      created = await api('post', '/console/api/keys', {
        body: {
          ...(teamName === undefined ? {} : { team: teamName }),
          ...(Object.keys(policy).length ? { policy } : {}),
        },
      });
    } catch (error) {
      // A refused policy is shown under its field (the fields opened); any other refusal beside the button.
      if (!(error instanceof CallError && error.envelope.data?.param?.startsWith('policy.'))) throw error;
      newPolicy.showError(error);
      body('keys').querySelector<HTMLDetailsElement>('#new-key-policy')!.open = true;
      return;
    }
    await renderKeys();
    showOnce(
      body('keys').querySelector('#new-key-slot')!,
      t('keys.newKey', { workspace: created.workspace }),
      created.apiKey,
      'new-key',
    );
  };
  const rows = keys.map((k) => [
    `${k.prefix}…`,
    k.workspace,
    dateTime(k.createdAt),
    h(
      'div',
      { id: `policy-${k.keyId}` },
      h('span', { class: 'key-policy', id: `policy-summary-${k.keyId}`, text: policySummary(k.policy) }),
      k.revokedAt
        ? null
        : policyEditor(
            `policy-${k.keyId}`,
            k,
            (policy) => api('put', '/console/api/keys/{keyId}/policy', { params: { keyId: k.keyId }, body: policy }),
            renderKeys,
          ),
    ),
    k.revokedAt
      ? t('keys.revokedOn', { date: k.revokedAt.slice(0, 10) })
      : button(
          t('keys.revoke'),
          `revoke-${k.keyId}`,
          async () =>
            void (await api('post', '/console/api/keys/{keyId}/revoke', { params: { keyId: k.keyId } }),
            await renderKeys()),
          true,
        ),
  ]);
  slot.replaceChildren(
    table(['keys.colKey', 'keys.colWorkspace', 'keys.colCreated', 'keys.colPolicy', ''], rows, 'keys-table'),
    keys.length ? '' : h('p', { class: 'hint', text: t('keys.none') }),
    h(
      'details',
      { id: 'new-key-policy' },
      h('summary', { id: 'new-key-policy-toggle', text: t('keys.newKeyPolicy') }),
      newPolicy.element,
    ),
    h('p', {}, button(t('keys.createPersonal'), 'create-key', create()), ' '),
    h(
      'div',
      { class: 'row' },
      team,
      button(t('keys.createTeam'), 'create-team-key', async () => create(team.value)()),
    ),
    h('div', { id: 'new-key-slot' }),
  );
}

function renderSettings(session: Session) {
  const language = h('select', { id: 'language' }, h('option', { value: '', text: t('settings.languageBrowser') }));
  for (const l of session.languages)
    language.append(
      h('option', {
        value: l,
        text: `${LANGUAGE_NAMES[l as keyof typeof LANGUAGE_NAMES] ?? l} (${l})`,
        selected: l === session.language,
      }),
    );
  const version = h(
    'select',
    { id: 'payload-version' },
    ...[1, 2].map((v) =>
      h('option', {
        value: String(v),
        text: t('settings.payloadVersionOption', { version: v }),
        selected: v === session.payloadVersion,
      }),
    ),
  );
  const saved = h('span', { id: 'settings-saved' });
  body('settings').replaceChildren(
    h(
      'label',
      { for: 'language', text: t('settings.language') },
      h('small', { class: 'hint', text: t('settings.languageHint') }),
    ),
    language,
    h('label', { for: 'payload-version', text: t('settings.payloadVersion') }),
    version,
    h(
      'p',
      {},
      button(t('settings.save'), 'save-settings', async () => {
        await api('post', '/console/api/settings', {
          body: { language: language.value, payloadVersion: Number(version.value) as 1 | 2 },
        });
        saved.textContent = ` ${t('settings.saved')}`;
        // The pages follow the setting: load them again when it changes what they are written in.
        if (language.value !== (session.language ?? '')) location.reload();
      }),
      saved,
    ),
  );
}

async function renderTasks() {
  const tasks = await api('get', '/console/api/tasks');
  body('tasks').replaceChildren(
    table(
      ['tasks.colTask', 'tasks.colModel', 'tasks.colState', 'tasks.colWallet', 'tasks.colCredits', 'tasks.colCreated'],
      tasks.map((x) => [
        x.taskId,
        x.model,
        h('span', { class: 'badge', 'data-state': x.state, text: stateText(x.state) }),
        t(x.wallet === 'api' ? 'wallet.api' : 'wallet.playground'),
        String(x.credits),
        dateTime(x.createdAt),
      ]),
      'tasks-table',
    ),
  );
}

async function main() {
  const app = document.getElementById('app')!;
  const session = await ensureSession(app);
  // An operator signs in to look after the service: its sections come first, the account's own below.
  app.replaceChildren(
    ...(session.role === 'operator' ? operatorSections() : []),
    section('balance', 'console.balance'),
    section('usage', 'console.usage'),
    section('statement', 'console.statement'),
    section('keys', 'console.keys'),
    section('webhooks', 'console.webhooks'),
    section('deliveries', 'console.deliveries'),
    section('settings', 'console.settings'),
    section('tasks', 'console.tasks'),
  );
  renderSettings(session);
  await Promise.all([
    renderBalance(session).then(() =>
      renderPayments(document.getElementById('payments')!, () => renderBalance(session)),
    ),
    renderUsage(),
    renderStatement(body('statement')),
    renderKeys(),
    renderWebhooks(session),
    renderDeliveries(),
    renderTasks(),
    session.role === 'operator' ? renderOperator() : undefined,
  ]);
  document.body.dataset.ready = 'true';
}

main().catch((error) => {
  document.getElementById('app')!.replaceChildren(h('p', { class: 'error', text: errorText(error) }));
});

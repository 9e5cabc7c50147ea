/** /console: balance, usage chart (uPlot), keys, team keys, webhook secret, endpoints, deliveries, settings, tasks. */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { call, ensureSession, errorText, h, type Session } from './common.js';

const sections = new Map<string, HTMLElement>();

function section(id: string, title: string): HTMLElement {
  const body = h('div', { id: `${id}-body` });
  sections.set(id, body);
  return h('section', { id }, h('h2', { text: title }), body);
}

function table(headers: string[], rows: (Node | string)[][], id: string): HTMLTableElement {
  return h('table', { id }, h('thead', {}, h('tr', {}, ...headers.map((x) => h('th', { text: x })))), h('tbody', {}, ...rows.map((r) => h('tr', {}, ...r.map((c) => h('td', {}, c))))));
}

function button(text: string, id: string, run: () => Promise<void>, secondary = false): HTMLButtonElement {
  const b = h('button', { id, text, class: secondary ? 'secondary' : '' });
  const message = h('span', { class: 'error' });
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

/** A secret shown once: in the page until it is reloaded, never retrievable again. */
function showOnce(slot: HTMLElement, label: string, secret: string, id: string) {
  slot.replaceChildren(h('p', { text: `${label} (shown once; copy it now):` }), h('div', { class: 'secret', id, text: secret }));
}

let chart: uPlot | undefined;

async function renderUsage() {
  const body = sections.get('usage')!;
  const usage = await call<{ byDay: { day: string; api: number; playground: number; tasks: number }[]; byModel: { model: string; tasks: number; credits: number }[] }>('GET', '/console/api/usage');
  const holder = h('div', { id: 'usage-chart' });
  body.replaceChildren(holder, table(['Model', 'Tasks', 'Credits'], usage.byModel.map((m) => [m.model, String(m.tasks), String(m.credits)]), 'usage-by-model'));
  const xs = usage.byDay.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000);
  chart?.destroy();
  chart = new uPlot(
    {
      width: Math.min(1000, (body.clientWidth || 900) - 10),
      height: 220,
      title: 'Credits per day (last 30 days)',
      series: [{}, { label: 'API', stroke: '#2f6fde', fill: 'rgba(47,111,222,.15)' }, { label: 'Playground', stroke: '#d0782a', fill: 'rgba(208,120,42,.15)' }],
      axes: [{}, { label: 'credits' }],
    },
    [xs, usage.byDay.map((d) => d.api), usage.byDay.map((d) => d.playground)],
    holder,
  );
}

async function renderBalance() {
  const b = await call<{ api: { available: number; held: number }; playground: { available: number } }>('GET', '/console/api/balance');
  sections.get('balance')!.replaceChildren(
    h('p', {}, 'API credits: ', h('strong', { id: 'api-balance', text: String(b.api.available) }), ` available, ${b.api.held} held. Playground credits: `, h('strong', { id: 'playground-balance', text: String(b.playground.available) }), '.'),
  );
}

async function renderKeys() {
  const body = sections.get('keys')!;
  const keys = await call<{ keyId: string; prefix: string; workspace: string; createdAt: string; revokedAt: string | null }[]>('GET', '/console/api/keys');
  const secret = h('div', { id: 'new-key-slot' });
  const team = h('input', { type: 'text', id: 'team-name', placeholder: 'team name (letters, digits, _ . -)' });
  const create = (teamName?: string) => async () => {
    const created = await call<{ apiKey: string; workspace: string }>('POST', '/console/api/keys', teamName === undefined ? {} : { team: teamName });
    await renderKeys();
    showOnce(sections.get('keys')!.querySelector('#new-key-slot')!, `New ${created.workspace} key`, created.apiKey, 'new-key');
  };
  const rows = keys.map((k) => [
    `${k.prefix}…`,
    k.workspace,
    k.createdAt.slice(0, 19).replace('T', ' '),
    k.revokedAt ? `revoked ${k.revokedAt.slice(0, 10)}` : button('Revoke', `revoke-${k.keyId}`, async () => void (await call('POST', `/console/api/keys/${k.keyId}/revoke`), await renderKeys()), true),
  ]);
  body.replaceChildren(
    table(['Key', 'Workspace', 'Created', ''], rows, 'keys-table'),
    h('p', {}, button('Create personal key', 'create-key', create()), ' '),
    h('div', { class: 'row' }, team, button('Create team workspace key', 'create-team-key', async () => create(team.value)())),
    secret,
  );
}

async function renderWebhooks(session: Session) {
  const body = sections.get('webhooks')!;
  const secretSlot = h('div', { id: 'secret-slot' });
  const endpoints = await call<{ endpointId: string; url: string; events: string[]; enabled: boolean }[]>('GET', '/console/api/endpoints');
  const url = h('input', { type: 'text', id: 'endpoint-url', placeholder: 'https://example.com/hooks' });
  const boxes = session.events.map((event) => h('input', { type: 'checkbox', value: event, id: `ev-${event}`, checked: event === 'task.completed' }));
  const endpointSecret = h('div', { id: 'endpoint-secret-slot' });
  body.replaceChildren(
    h('p', { text: 'The account signing secret signs task callbacks (X-Webhook-Signature). Rotating it takes effect at once, retries and resends included.' }),
    button('Rotate signing secret', 'rotate-secret', async () => showOnce(secretSlot, 'New signing secret', (await call<{ secret: string }>('POST', '/console/api/webhook-secret/rotate')).secret, 'new-secret')),
    secretSlot,
    h('h3', { text: 'Account endpoints' }),
    table(['Endpoint', 'URL', 'Events', 'State'], endpoints.map((e) => [e.endpointId, e.url, e.events.join(', '), e.enabled ? 'enabled' : 'disabled']), 'endpoints-table'),
    h('label', { for: 'endpoint-url', text: 'New endpoint URL' }),
    url,
    h('p', {}, ...boxes.flatMap((b) => [b, ` ${b.value}  `])),
    button('Add endpoint', 'add-endpoint', async () => {
      const created = await call<{ secret: string }>('POST', '/console/api/endpoints', { url: url.value, events: boxes.filter((b) => b.checked).map((b) => b.value) });
      await renderWebhooks(session);
      showOnce(sections.get('webhooks')!.querySelector('#endpoint-secret-slot')!, 'Endpoint secret', created.secret, 'endpoint-secret');
    }),
    endpointSecret,
  );
}

async function renderDeliveries() {
  const rows = await call<{ deliveryId: string; kind: string; event: string; url: string; state: string; attempts: number; lastStatus: number | null; taskId: string }[]>('GET', '/console/api/deliveries');
  sections.get('deliveries')!.replaceChildren(
    button('Refresh', 'refresh-deliveries', renderDeliveries, true),
    table(
      ['Delivery', 'Task', 'Kind', 'Event', 'State', 'Attempts', 'Last status', ''],
      rows.map((d) => [
        d.deliveryId,
        d.taskId,
        d.kind,
        d.event,
        h('span', { class: 'badge', 'data-delivery-state': d.deliveryId, text: d.state }),
        String(d.attempts),
        String(d.lastStatus ?? '—'),
        d.state === 'pending' ? '' : button('Resend', `resend-${d.deliveryId}`, async () => void (await call('POST', `/console/api/deliveries/${d.deliveryId}/resend`), await renderDeliveries()), true),
      ]),
      'deliveries-table',
    ),
  );
}

function renderSettings(session: Session) {
  const language = h('select', { id: 'language' }, h('option', { value: '', text: 'Accept-Language of each request (default en)' }));
  for (const l of session.languages) language.append(h('option', { value: l, text: l, selected: l === session.language }));
  const version = h('select', { id: 'payload-version' }, ...[1, 2].map((v) => h('option', { value: String(v), text: `version ${v}`, selected: v === session.payloadVersion })));
  const saved = h('span', { id: 'settings-saved' });
  sections.get('settings')!.replaceChildren(
    h('label', { for: 'language', text: 'API error language' }),
    language,
    h('label', { for: 'payload-version', text: 'Webhook payload version' }),
    version,
    h('p', {}, button('Save settings', 'save-settings', async () => {
      await call('POST', '/console/api/settings', { language: language.value, payloadVersion: Number(version.value) });
      saved.textContent = ' Saved.';
    }), saved),
  );
}

async function renderTasks() {
  const tasks = await call<{ taskId: string; model: string; state: string; wallet: string; credits: number; createdAt: string }[]>('GET', '/console/api/tasks');
  sections.get('tasks')!.replaceChildren(
    table(['Task', 'Model', 'State', 'Wallet', 'Credits', 'Created'], tasks.map((t) => [t.taskId, t.model, h('span', { class: 'badge', text: t.state }), t.wallet, String(t.credits), t.createdAt.slice(0, 19).replace('T', ' ')]), 'tasks-table'),
  );
}

async function main() {
  const app = document.getElementById('app')!;
  const session = await ensureSession(app);
  app.replaceChildren(
    section('balance', 'Balance'),
    section('usage', 'Usage'),
    section('keys', 'API keys and team workspaces'),
    section('webhooks', 'Webhooks'),
    section('deliveries', 'Delivery log'),
    section('settings', 'Settings'),
    section('tasks', 'Tasks'),
  );
  renderSettings(session);
  await Promise.all([renderBalance(), renderUsage(), renderKeys(), renderWebhooks(session), renderDeliveries(), renderTasks()]);
  document.body.dataset.ready = 'true';
}

main().catch((error) => {
  document.getElementById('app')!.replaceChildren(h('p', { class: 'error', text: errorText(error) }));
});

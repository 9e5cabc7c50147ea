/** The console's webhook sections: the signing secret, account endpoints (add, disable, enable, rotate, delete) and the delivery log. */
import type { UiTextKey } from '../../../generated/ui-text.js';
import { api, h, t, type Session } from './common.js';
import type { ApiData } from './api.js';
import { body, button, confirmButton, dateTime, showOnce, table } from './console-ui.js';

type Endpoint = ApiData<'/console/api/endpoints', 'get'>[number];

function endpointActions(e: Endpoint, session: Session): HTMLElement {
  const params = { endpointId: e.endpointId };
  const rerender = () => renderWebhooks(session);
  const toggle = e.enabled
    ? button(
        t('webhooks.disable'),
        `disable-${e.endpointId}`,
        async () =>
          void (await api('post', '/console/api/endpoints/{endpointId}/disable', { params }), await rerender()),
        true,
      )
    : button(
        t('webhooks.enable'),
        `enable-${e.endpointId}`,
        async () =>
          void (await api('post', '/console/api/endpoints/{endpointId}/enable', { params }), await rerender()),
        true,
      );
  const rotate = button(
    t('webhooks.rotateEndpointSecret'),
    `rotate-${e.endpointId}`,
    async () => {
      const rotated = await api('post', '/console/api/endpoints/{endpointId}/rotate-secret', { params });
      await rerender();
      showOnce(
        body('webhooks').querySelector('#endpoint-secret-slot')!,
        t('webhooks.endpointSecretRotated', { until: dateTime(rotated.previousValidUntil) }),
        rotated.secret,
        'endpoint-secret',
      );
    },
    true,
  );
  const remove = confirmButton(
    t('webhooks.delete'),
    t('webhooks.deleteConfirm'),
    `delete-${e.endpointId}`,
    async () => void (await api('post', '/console/api/endpoints/{endpointId}/delete', { params }), await rerender()),
  );
  return h('span', { class: 'actions' }, toggle, ' ', rotate, ' ', remove);
}

export async function renderWebhooks(session: Session) {
  const slot = body('webhooks');
  const secretSlot = h('div', { id: 'secret-slot' });
  const endpoints = await api('get', '/console/api/endpoints');
  const url = h('input', { type: 'text', id: 'endpoint-url', placeholder: 'https://example.com/hooks' });
  const boxes = session.events.map((event) =>
    h('input', { type: 'checkbox', value: event, id: `ev-${event}`, checked: event === 'task.completed' }),
  );
  const rows = endpoints.map((e) => [
    e.endpointId,
    e.url,
    e.events.join(', '),
    h('span', {
      class: e.enabled ? 'badge' : 'badge off',
      'data-endpoint-state': e.endpointId,
      text: t(e.enabled ? 'webhooks.enabled' : 'webhooks.disabled'),
    }),
    endpointActions(e, session),
  ]);
  slot.replaceChildren(
    h('p', { text: t('webhooks.secretIntro') }),
    button(t('webhooks.rotateSecret'), 'rotate-secret', async () =>
      showOnce(
        secretSlot,
        t('webhooks.newSecret'),
        (await api('post', '/console/api/webhook-secret/rotate')).secret,
        'new-secret',
      ),
    ),
    secretSlot,
    h('h3', { text: t('webhooks.endpoints') }),
    h('p', { class: 'hint', text: t('webhooks.endpointsIntro') }),
    table(
      ['webhooks.colEndpoint', 'webhooks.colUrl', 'webhooks.colEvents', 'webhooks.colState', ''],
      rows,
      'endpoints-table',
    ),
    h('label', { for: 'endpoint-url', text: t('webhooks.newUrl') }),
    url,
    h('p', {}, ...boxes.flatMap((b) => [b, ` ${b.value}  `])),
    button(t('webhooks.add'), 'add-endpoint', async () => {
      const created = await api('post', '/console/api/endpoints', {
        body: { url: url.value, events: boxes.filter((b) => b.checked).map((b) => b.value) },
      });
      await renderWebhooks(session);
      showOnce(
        body('webhooks').querySelector('#endpoint-secret-slot')!,
        t('webhooks.endpointSecret'),
        created.secret,
        'endpoint-secret',
      );
    }),
    h('div', { id: 'endpoint-secret-slot' }),
  );
}

const DELIVERY_STATES: Record<string, UiTextKey> = {
  pending: 'delivery.pending',
  delivered: 'delivery.delivered',
  failed: 'delivery.failed',
};
const DELIVERY_KINDS: Record<string, UiTextKey> = {
  callback: 'delivery.kindCallback',
  endpoint: 'delivery.kindEndpoint',
};

export async function renderDeliveries() {
  const rows = await api('get', '/console/api/deliveries');
  body('deliveries').replaceChildren(
    button(t('deliveries.refresh'), 'refresh-deliveries', renderDeliveries, true),
    table(
      [
        'deliveries.colDelivery',
        'deliveries.colTask',
        'deliveries.colKind',
        'deliveries.colEvent',
        'deliveries.colState',
        'deliveries.colAttempts',
        'deliveries.colLastStatus',
        '',
      ],
      rows.map((d) => [
        d.deliveryId,
        d.taskId ?? '',
        DELIVERY_KINDS[d.kind] ? t(DELIVERY_KINDS[d.kind]) : d.kind,
        d.event,
        h('span', {
          class: 'badge',
          'data-delivery-state': d.deliveryId,
          'data-state': d.state,
          text: DELIVERY_STATES[d.state] ? t(DELIVERY_STATES[d.state]) : d.state,
        }),
        String(d.attempts),
        String(d.lastStatus ?? '—'),
        d.state === 'pending'
          ? ''
          : button(
              t('deliveries.resend'),
              `resend-${d.deliveryId}`,
              async () =>
                void (await api('post', '/console/api/deliveries/{deliveryId}/resend', {
                  params: { deliveryId: d.deliveryId },
                }),
                await renderDeliveries()),
              true,
            ),
      ]),
      'deliveries-table',
    ),
  );
}

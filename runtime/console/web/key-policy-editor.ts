/**
 * A key's policy in the console (issue 40): its compact summary for a key's row, the fields that
 * give a new key its policy, and the editor of a live key's policy. One module for both pages that
 * show keys: the owner's keys page (console.ts, consoleSetKeyPolicy) and the operator's account
 * view (console-operator.ts, operatorSetKeyPolicy); each passes the call that saves.
 */
import type { components } from '../../../generated/console/types.js';
import type { UiTextKey } from '../../../generated/ui-text.js';
import { type ApiData, CallError } from './api.js';
import { errorText, h, t } from './common.js';
import { button } from './console-ui.js';

/** A key as the list answers it, with its policy and what it has used. */
export type PolicyKey = ApiData<'/console/api/keys', 'get'>[number];
type PolicyState = PolicyKey['policy'];
/** The policy as consoleCreateKey, consoleSetKeyPolicy and operatorSetKeyPolicy take it (null clears a part). */
type Body = components['schemas']['KeyPolicyInput'];

type Period = 'day' | 'week' | 'month' | 'lifetime';
const PERIODS: [Period, UiTextKey][] = [
  ['day', 'keys.periodDay'],
  ['week', 'keys.periodWeek'],
  ['month', 'keys.periodMonth'],
  ['lifetime', 'keys.periodLifetime'],
];
const BUDGET_TEXT: Record<Period, UiTextKey> = {
  day: 'keys.budgetDay',
  week: 'keys.budgetWeek',
  month: 'keys.budgetMonth',
  lifetime: 'keys.budgetLifetime',
};

/** The policy in one line: budget used/credits per period and what is left, models, in flight, expiry, networks. */
export function policySummary(policy: PolicyState): string {
  const parts: string[] = [];
  const { budget } = policy;
  if (budget)
    parts.push(
      t(BUDGET_TEXT[budget.period], { used: budget.used, credits: budget.credits, remaining: budget.remaining }),
    );
  if (policy.models) parts.push(t('keys.policyModels', { models: policy.models.join(', ') }));
  if (policy.maxTasksInFlight !== null)
    parts.push(t('keys.policyInFlight', { inFlight: policy.inFlight, max: policy.maxTasksInFlight }));
  if (policy.expiresAt) parts.push(t('keys.policyExpires', { date: policy.expiresAt.slice(0, 10) }));
  if (policy.networks) parts.push(t('keys.policyNetworks', { networks: policy.networks.join(', ') }));
  return parts.length ? parts.join(' · ') : t('keys.noLimits');
}

const list = (text: string) =>
  text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);

/** The parts of a form, each with the body field a refusal names (`param`, without `policy.`). */
type Part = keyof Body;

export interface PolicyFields {
  element: HTMLElement;
  /** What changed from the policy the fields were filled with (all that is filled, for a new key); an emptied part is null. */
  read(): Body;
  /** A refusal under its field when it names one, else under the form; '' clears them. */
  showError(error: unknown): void;
}

/** The policy's fields, filled with `current` (a live key's) or empty (a new key's); ids start with `idPrefix`. */
export function policyFields(idPrefix: string, current?: PolicyState): PolicyFields {
  const id = (name: string) => `${idPrefix}-${name}`;
  const credits = h('input', { type: 'number', id: id('budget'), min: 1, step: 1 });
  const period = h(
    'select',
    { id: id('period') },
    ...PERIODS.map(([value, text]) => h('option', { value, text: t(text) })),
  );
  const alerts = h('input', { type: 'text', id: id('budgetAlerts'), placeholder: '80, 100' });
  const models = h('input', { type: 'text', id: id('models'), placeholder: 'vendor/*' });
  const maxTasksInFlight = h('input', { type: 'number', id: id('maxTasksInFlight'), min: 1, step: 1 });
  const expires = h('input', { type: 'date', id: id('expires') });
  const networks = h('input', { type: 'text', id: id('networks'), placeholder: '203.0.113.0/24' });
  if (current) {
    credits.value = current.budget ? String(current.budget.credits) : '';
    period.value = current.budget?.period ?? 'month';
    alerts.value = current.budget ? current.budget.alerts.join(', ') : '';
    models.value = current.models?.join(', ') ?? '';
    maxTasksInFlight.value = current.maxTasksInFlight === null ? '' : String(current.maxTasksInFlight);
    expires.value = current.expiresAt?.slice(0, 10) ?? '';
    networks.value = current.networks?.join(', ') ?? '';
  } else period.value = 'month';

  const slots = new Map<Part, { wrapper: HTMLElement; slot: HTMLElement }>();
  const field = (part: Part, label: UiTextKey, ...controls: HTMLElement[]) => {
    const slot = h('div', { class: 'error', id: id(`error-${part}`) });
    const wrapper = h(
      'div',
      { class: 'field', 'data-field': part },
      h('label', { for: controls[0].id, text: t(label) }),
      ...controls,
      slot,
    );
    slots.set(part, { wrapper, slot });
    return wrapper;
  };
  const general = h('div', { class: 'error', id: id('error') });
  const element = h(
    'div',
    { class: 'key-policy-fields', id: id('fields') },
    h('p', { class: 'hint', text: t('keys.policyHint') }),
    h(
      'div',
      { class: 'row' },
      field('budget', 'keys.budgetCredits', credits),
      h('div', {}, h('label', { for: period.id, text: t('keys.budgetPeriod') }), period),
    ),
    field('budgetAlerts', 'keys.budgetAlerts', alerts),
    field('models', 'keys.models', models),
    h(
      'div',
      { class: 'row' },
      field('maxTasksInFlight', 'keys.maxTasksInFlight', maxTasksInFlight),
      field('expires', 'keys.expires', expires),
    ),
    field('networks', 'keys.networks', networks),
    general,
  );

  // What each part would send now, and what it sent when the form was filled: an unchanged part is left out.
  const values = (): Record<Part, Body[Part]> => {
    const budget = credits.value.trim() === '' ? null : `${credits.value.trim()}/${period.value}`;
    return {
      budget,
      // Alerts belong to a budget: without one there are none to set (the service refuses them).
      budgetAlerts: budget === null ? undefined : alerts.value.trim() === '' ? null : list(alerts.value).map(Number),
      models: models.value.trim() === '' ? null : list(models.value),
      maxTasksInFlight: maxTasksInFlight.value.trim() === '' ? null : Number(maxTasksInFlight.value),
      expires: expires.value === '' ? null : expires.value,
      networks: networks.value.trim() === '' ? null : list(networks.value),
    };
  };
  const initial = JSON.stringify(values());
  const initialValues = JSON.parse(initial) as Record<Part, unknown>;

  return {
    element,
    read() {
      const now = values();
      const body: Record<string, unknown> = {};
      for (const part of Object.keys(now) as Part[]) {
        const value = now[part];
        if (value === undefined) continue;
        if (current ? JSON.stringify(value) === JSON.stringify(initialValues[part]) : value === null) continue;
        body[part] = value;
      }
      // A new budget keeps the alerts typed beside it: sent with it when the budget changes.
      if (body.budget !== undefined && body.budget !== null && now.budgetAlerts !== undefined)
        body.budgetAlerts = now.budgetAlerts;
      return body as Body;
    },
    showError(error) {
      for (const { wrapper, slot } of slots.values()) {
        slot.textContent = '';
        wrapper.classList.remove('field-error');
      }
      general.textContent = '';
      if (error === '') return;
      const param = error instanceof CallError ? error.envelope.data?.param?.replace(/^policy\./, '') : undefined;
      const target = param === undefined ? undefined : slots.get(param as Part);
      if (target) {
        target.slot.textContent = errorText(error);
        target.wrapper.classList.add('field-error');
      } else general.textContent = errorText(error);
    },
  };
}

/**
 * A live key's policy editor: its fields under an "Edit policy" disclosure and the button that
 * saves what changed through `save` (the owner's or the operator's operation), then `saved` (which
 * draws the keys again: the row shows the new policy, and this editor's successor says it was saved).
 * A refusal stays in the form, under its field.
 */
export function policyEditor(
  idPrefix: string,
  key: PolicyKey,
  save: (body: Body) => Promise<unknown>,
  saved: () => Promise<void>,
): HTMLElement {
  const fields = policyFields(idPrefix, key.policy);
  const status = h('span', { class: 'hint', id: `${idPrefix}-saved` });
  return h(
    'div',
    {},
    h(
      'details',
      { id: `${idPrefix}-editor` },
      h('summary', { id: `${idPrefix}-edit`, text: t('keys.editPolicy') }),
      fields.element,
      h(
        'p',
        {},
        button(t('keys.savePolicy'), `${idPrefix}-save`, async () => {
          // The last save's word goes with a new attempt: a refusal is never shown beside "saved".
          status.textContent = '';
          fields.showError('');
          try {
            await save(fields.read());
          } catch (error) {
            fields.showError(error);
            return;
          }
          await saved();
          const done = document.getElementById(`${idPrefix}-saved`);
          if (done) done.textContent = t('keys.policySaved');
        }),
      ),
    ),
    status,
  );
}

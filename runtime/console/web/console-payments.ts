/**
 * Buying credits (issue 39), under the balance: one button per credit pack, shown only while
 * payments are on (GET /console/api/payments/packs answers no packs otherwise). A button asks for a
 * Checkout Session and goes to it; coming back (`?payment=success`), the page says the credits
 * arrive once the payment is confirmed and shows the balance again until they have.
 */
import { api, h, t } from './common.js';

/** A price in minor units as the page's language writes it in that currency (display only: no sum is made of it). */
function priceText(minor: number, currency: string): string {
  const format = new Intl.NumberFormat(document.documentElement.lang, { style: 'currency', currency });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(minor / 10 ** digits);
}

export async function renderPayments(slot: HTMLElement, refreshBalance: () => Promise<void>): Promise<void> {
  const offer = await api('get', '/console/api/payments/packs');
  const parts: HTMLElement[] = [];
  if (offer.owed > 0)
    parts.push(h('p', { class: 'error', id: 'payments-owed', text: t('payments.owed', { owed: offer.owed }) }));
  const returned = new URLSearchParams(location.search).get('payment');
  if (returned === 'success') {
    parts.push(h('p', { class: 'hint', id: 'payments-pending', text: t('payments.pending') }));
    // The webhook credits the pack, usually within seconds: the balance is read again until then (two minutes at most).
    const until = Date.now() + 120_000;
    const timer = setInterval(() => {
      if (Date.now() > until) clearInterval(timer);
      else void refreshBalance();
    }, 3000);
  } else if (returned === 'canceled')
    parts.push(h('p', { class: 'hint', id: 'payments-canceled', text: t('payments.canceled') }));
  if (offer.enabled && offer.packs.length > 0)
    parts.push(
      h(
        'p',
        { id: 'payments-packs' },
        ...offer.packs.map((pack) => {
          const b = h('button', {
            id: `buy-${pack.name}`,
            text: t('payments.buy', {
              name: pack.name,
              credits: pack.credits + pack.bonus,
              price: priceText(pack.price, pack.currency.toUpperCase()),
            }),
          });
          b.addEventListener('click', async () => {
            b.disabled = true;
            const { url } = await api('post', '/console/api/payments/checkout', { body: { pack: pack.name } });
            location.assign(url);
          });
          return b;
        }),
      ),
    );
  slot.replaceChildren(...parts);
}

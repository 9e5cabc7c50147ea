import type { Config } from '../config.js';

/** Where the payment processor's API is reached (stripe-node's host, port, protocol). */
export interface ApiOrigin {
  host: string;
  port: number;
  protocol: 'http' | 'https';
}

/** Payments switched on: the processor's secrets, its API origin, and where customers come back to. */
export interface PaymentsOn {
  on: true;
  secretKey: string;
  webhookSecrets: readonly string[];
  /** Unset: the processor's own API. */
  apiOrigin?: ApiOrigin;
  /** MEDIAFORGE_PUBLIC_URL's origin (https): the only origin return links name. */
  returnOrigin: string;
}

/** Payments off, and the one line `serve` says why. */
export interface PaymentsOff {
  on: false;
  reason: string;
}

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|localhost)$/;

/**
 * Reads the payment settings. Off without both secrets (the console then shows no buy button);
 * a setting that is there but wrong (an http public URL, an API origin with a path or plain http
 * off loopback) stops the service instead, since the operator meant payments on.
 */
export function paymentSettings(config: Config): PaymentsOn | PaymentsOff {
  const { stripeSecretKey, stripeWebhookSecrets } = config;
  if (!stripeSecretKey || stripeWebhookSecrets.length === 0)
    return {
      on: false,
      reason:
        'payments off: MEDIAFORGE_STRIPE_SECRET_KEY and MEDIAFORGE_STRIPE_WEBHOOK_SECRET are not both set (docs/payments.md)',
    };
  let publicUrl: URL;
  try {
    publicUrl = new URL(config.publicUrl);
  } catch {
    throw new Error(`payments need MEDIAFORGE_PUBLIC_URL to be an https origin, not ${config.publicUrl}`);
  }
  if (publicUrl.protocol !== 'https:' || publicUrl.pathname !== '/' || publicUrl.search || publicUrl.username)
    throw new Error(
      `payments need MEDIAFORGE_PUBLIC_URL to be an https origin (customers come back to it from the checkout), not ${config.publicUrl}`,
    );
  return {
    on: true,
    secretKey: stripeSecretKey,
    webhookSecrets: stripeWebhookSecrets,
    apiOrigin: config.stripeApiUrl === undefined ? undefined : apiOriginOf(config.stripeApiUrl),
    returnOrigin: publicUrl.origin,
  };
}

/** MEDIAFORGE_STRIPE_API_URL as stripe-node's host, port and protocol: an origin, http only on loopback. */
export function apiOriginOf(value: string): ApiOrigin {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`MEDIAFORGE_STRIPE_API_URL must be an origin (https://host[:port]), not ${value}`);
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash || url.username || url.password)
    throw new Error(`MEDIAFORGE_STRIPE_API_URL must be an origin, without a path, query or credentials: ${url.origin}`);
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname))
    throw new Error(`MEDIAFORGE_STRIPE_API_URL may be plain http only on loopback, not ${url.origin}`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`MEDIAFORGE_STRIPE_API_URL must be http(s), not ${url.protocol}`);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { host, port: url.port ? Number(url.port) : protocol === 'http' ? 80 : 443, protocol };
}

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

/**
 * A loopback Stripe API for tests and the docs' shell blocks, written from Stripe's published API
 * (github.com/stripe/openapi, stripe-node's request encoding): the calls mediaforge makes.
 * - POST /v1/checkout/sessions (form-encoded, bracketed keys as stripe-node sends them; the
 *   Idempotency-Key header answers the same session), GET /v1/checkout/sessions/{id},
 *   GET /v1/checkout/sessions?created[gte]=&limit=&starting_after= (a list object, newest first),
 *   GET /v1/refunds?charge= .
 * - Stripe's error envelope `{ error: { type, code, message, param } }`: 401 without the secret key,
 *   404 resource_missing, 400 parameter_missing.
 * Besides the API, what a test (or a reader of docs/payments.md) does in Stripe's dashboard: pay a
 * session, refund a charge, open or close a dispute; each answers the event Stripe would send,
 * signed by the `event` helper with `stripe.webhooks.generateTestHeaderString`.
 */

export interface FakeSession {
  id: string;
  object: 'checkout.session';
  mode: string;
  status: 'open' | 'complete' | 'expired';
  payment_status: 'unpaid' | 'paid';
  client_reference_id: string | null;
  metadata: Record<string, string>;
  amount_total: number;
  currency: string;
  payment_intent: string | null;
  success_url: string | null;
  cancel_url: string | null;
  url: string | null;
  created: number;
  livemode: false;
  /** Not Stripe's: kept to build the charge and the PaymentIntent. */
  payment_intent_metadata: Record<string, string>;
}

interface FakeRefund {
  id: string;
  object: 'refund';
  amount: number;
  charge: string;
  payment_intent: string;
  currency: string;
  status: 'succeeded';
  created: number;
}

export interface StripeApiServer {
  url: string;
  secretKey: string;
  sessions: Map<string, FakeSession>;
  /** Requests received, by method and path (tests check what the service asked). */
  requests: { method: string; path: string; idempotencyKey?: string }[];
  /** Pays a session (as a customer finishing the checkout): its charge and PaymentIntent exist from now on. */
  pay(sessionId: string): { session: FakeSession; charge: Record<string, unknown> };
  /** Refunds `amount` of a paid session's charge: the charge as `charge.refunded` carries it. */
  refund(sessionId: string, amount: number): Record<string, unknown>;
  /** A dispute of a paid session's charge (the whole amount). */
  dispute(sessionId: string, status?: 'needs_response' | 'won' | 'lost'): Record<string, unknown>;
  close(): Promise<void>;
}

const id = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('hex')}`;
const now = () => Math.floor(Date.now() / 1000);

/** Form-encoded body (`a[b][0][c]=1`) into nested objects and arrays, as Stripe reads it. */
export function parseForm(text: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.replace(/\]/g, '').split('[');
    let node: Record<string, unknown> = root;
    path.forEach((segment, i) => {
      if (i === path.length - 1) node[segment] = value;
      else {
        if (node[segment] === undefined) node[segment] = /^\d+$/.test(path[i + 1]) ? [] : {};
        node = node[segment] as Record<string, unknown>;
      }
    });
  }
  return root;
}

function send(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') });
  res.end(JSON.stringify(body));
}

function stripeError(res: ServerResponse, status: number, type: string, message: string, extra: object = {}) {
  send(res, status, { error: { type, message, ...extra } });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startStripeApiServer(options: { secretKey?: string } = {}): Promise<StripeApiServer> {
  const secretKey = options.secretKey ?? `sk_test_${randomBytes(16).toString('hex')}`;
  const sessions = new Map<string, FakeSession>();
  const refunds: FakeRefund[] = [];
  const byIdempotencyKey = new Map<string, FakeSession>();
  const requests: StripeApiServer['requests'] = [];
  let url = '';

  const chargeOf = (session: FakeSession) => {
    const refunded = refunds.filter((r) => r.payment_intent === session.payment_intent);
    const amountRefunded = refunded.reduce((a, r) => a + r.amount, 0);
    return {
      id: `ch_${session.payment_intent!.slice(3)}`,
      object: 'charge',
      amount: session.amount_total,
      amount_refunded: amountRefunded,
      refunded: amountRefunded >= session.amount_total,
      currency: session.currency,
      payment_intent: session.payment_intent,
      metadata: {},
      status: 'succeeded',
      created: session.created,
      livemode: false,
    };
  };

  const server: Server = createServer(async (req, res) => {
    const target = new URL(req.url ?? '/', 'http://stripe.invalid');
    const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
    requests.push({ method: req.method ?? '', path: target.pathname, idempotencyKey });
    if (req.headers.authorization !== `Bearer ${secretKey}`)
      return stripeError(res, 401, 'invalid_request_error', 'Invalid API Key provided.');
    const body = req.method === 'POST' ? parseForm(await readBody(req)) : {};
    if (req.method === 'POST' && target.pathname === '/v1/checkout/sessions') {
      if (idempotencyKey && byIdempotencyKey.has(idempotencyKey))
        return send(res, 200, byIdempotencyKey.get(idempotencyKey));
      const items = (body.line_items ?? []) as { quantity?: string; price_data?: Record<string, unknown> }[];
      if (!items.length)
        return stripeError(res, 400, 'invalid_request_error', 'Missing required param: line_items.', {
          code: 'parameter_missing',
          param: 'line_items',
        });
      const first = items[0].price_data ?? {};
      const amount = items.reduce(
        (sum, item) => sum + Number(item.quantity ?? 1) * Number(item.price_data?.unit_amount ?? 0),
        0,
      );
      const sessionId = id('cs');
      const session: FakeSession = {
        id: sessionId,
        object: 'checkout.session',
        mode: String(body.mode ?? 'payment'),
        status: 'open',
        payment_status: 'unpaid',
        client_reference_id: (body.client_reference_id as string) ?? null,
        metadata: (body.metadata as Record<string, string>) ?? {},
        amount_total: amount,
        currency: String(first.currency ?? 'usd'),
        payment_intent: null,
        success_url: (body.success_url as string) ?? null,
        cancel_url: (body.cancel_url as string) ?? null,
        url: `${url}/c/pay/${sessionId}`,
        created: now(),
        livemode: false,
        payment_intent_metadata:
          ((body.payment_intent_data as Record<string, unknown> | undefined)?.metadata as Record<string, string>) ?? {},
      };
      sessions.set(sessionId, session);
      if (idempotencyKey) byIdempotencyKey.set(idempotencyKey, session);
      return send(res, 200, session);
    }
    const one = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(target.pathname);
    if (req.method === 'GET' && one) {
      const session = sessions.get(decodeURIComponent(one[1]));
      if (!session)
        return stripeError(res, 404, 'invalid_request_error', `No such checkout.session: '${one[1]}'`, {
          code: 'resource_missing',
          param: 'id',
        });
      return send(res, 200, session);
    }
    if (req.method === 'GET' && target.pathname === '/v1/checkout/sessions') {
      const gte = Number(target.searchParams.get('created[gte]') ?? 0);
      const limit = Math.min(100, Number(target.searchParams.get('limit') ?? 10));
      const after = target.searchParams.get('starting_after');
      let list = [...sessions.values()].filter((s) => s.created >= gte).reverse();
      if (after) list = list.slice(list.findIndex((s) => s.id === after) + 1);
      return send(res, 200, {
        object: 'list',
        url: '/v1/checkout/sessions',
        has_more: list.length > limit,
        data: list.slice(0, limit),
      });
    }
    if (req.method === 'GET' && target.pathname === '/v1/refunds') {
      const charge = target.searchParams.get('charge');
      const list = refunds.filter((r) => !charge || r.charge === charge).reverse();
      const limit = Math.min(100, Number(target.searchParams.get('limit') ?? 10));
      const after = target.searchParams.get('starting_after');
      const rest = after ? list.slice(list.findIndex((r) => r.id === after) + 1) : list;
      return send(res, 200, {
        object: 'list',
        url: '/v1/refunds',
        has_more: rest.length > limit,
        data: rest.slice(0, limit),
      });
    }
    return stripeError(
      res,
      404,
      'invalid_request_error',
      `Unrecognized request URL (${req.method}: ${target.pathname}).`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const paid = (sessionId: string) => {
    const session = sessions.get(sessionId);
    if (!session?.payment_intent) throw new Error(`session ${sessionId} is not paid`);
    return session;
  };
  return {
    url,
    secretKey,
    sessions,
    requests,
    pay(sessionId) {
      const session = sessions.get(sessionId);
      if (!session) throw new Error(`no session ${sessionId}`);
      session.status = 'complete';
      session.payment_status = 'paid';
      session.payment_intent ??= id('pi');
      return { session, charge: chargeOf(session) };
    },
    refund(sessionId, amount) {
      const session = paid(sessionId);
      const charge = chargeOf(session);
      refunds.push({
        id: id('re'),
        object: 'refund',
        amount,
        charge: charge.id,
        payment_intent: session.payment_intent!,
        currency: session.currency,
        status: 'succeeded',
        created: now(),
      });
      return chargeOf(session);
    },
    dispute(sessionId, status = 'needs_response') {
      const session = paid(sessionId);
      return {
        id: `dp_${session.payment_intent!.slice(3)}`,
        object: 'dispute',
        amount: session.amount_total,
        currency: session.currency,
        charge: chargeOf(session).id,
        payment_intent: session.payment_intent,
        status,
        reason: 'fraudulent',
        created: now(),
        livemode: false,
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An event as Stripe sends it, and its Stripe-Signature header made by stripe-node's own test helper. */
export function signedEvent(
  type: string,
  object: unknown,
  secret: string,
  options: { timestamp?: number; id?: string } = {},
): { body: string; signature: string; id: string } {
  const eventId = options.id ?? id('evt');
  const body = JSON.stringify({
    id: eventId,
    object: 'event',
    api_version: '2025-11-17.clover',
    created: now(),
    type,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object },
  });
  const signature = Stripe.webhooks.generateTestHeaderString({
    payload: body,
    secret,
    ...(options.timestamp !== undefined ? { timestamp: options.timestamp } : {}),
  });
  return { body, signature, id: eventId };
}

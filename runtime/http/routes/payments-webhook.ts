import type { FastifyInstance } from 'fastify';
import type { Context } from '../../context.js';
import { ApiError } from '../../errors.js';
import { BadSignature } from '../../payments/payment-processor.js';

/** The webhook's path: outside /api/v1 and the console (its caller is the payment processor). */
export const PAYMENTS_WEBHOOK_PATH = '/payments/stripe/webhook';
/** The largest event read: Stripe's events are a few kilobytes; a larger body is refused before it is read whole. */
const WEBHOOK_BODY_LIMIT = 512 * 1024;

/**
 * POST /payments/stripe/webhook: the processor's events, in their own scope with a raw-body
 * parser (the signature covers the exact bytes) and its own body limit; the global per-address rate
 * limit counts it as every route without a key. The signature (any of the accepted secrets, the
 * library's default tolerance) is checked before anything in the body is read: a missing, wrong or
 * stale one answers 400 and changes nothing. A verified event answers 200 whatever it did (ignored,
 * applied, applied already, recorded for the operator), so the processor stops resending it.
 * Not bound when payments are off: the route is then unknown (404).
 */
export async function registerPaymentsWebhook(app: FastifyInstance, ctx: Context): Promise<void> {
  const { payments } = ctx;
  if (!payments) return;
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) =>
      done(null, body),
    );
    scope.post(PAYMENTS_WEBHOOK_PATH, async (request, reply) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const signature = request.headers['stripe-signature'];
      let outcome: string;
      try {
        outcome = await payments.receive(body, typeof signature === 'string' ? signature : undefined, ctx.clock.now());
      } catch (error) {
        if (error instanceof BadSignature) throw new ApiError('payment_signature_invalid');
        throw error;
      }
      return reply.status(200).send({ received: true, outcome });
    });
  });
}

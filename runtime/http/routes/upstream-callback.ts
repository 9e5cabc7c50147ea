import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Context } from '../../context.js';
import { ApiError } from '../../errors.js';
import { wakeOnUpstreamCallback } from '../../tasks/upstream-callback.js';
import { UPSTREAM_CALLBACK_PATH, upstreamCallbackToken } from '../../upstreams/upstream-callback-url.js';

/** The largest callback body read (the poll is the truth: the body is only handed to the adapter's signature check). */
const CALLBACK_BODY_LIMIT = 1024 * 1024;

/**
 * POST /upstream-callbacks/{deployment}/{taskId}?sig= (the upstream callback, `upstreamCallbackUrl`): an upstream's "the job ended" (jobs'
 * callBackUrl, Replicate's webhook, fal's fal_webhook). An accelerator only: the URL's token (and
 * the adapter's own signature check, where the provider signs) must hold, and then the task's
 * poll is made due now; what the task becomes is decided by that poll's answer, never by the body.
 * Only the deployment the task is pinned to can wake it, once: a job ends once, so a later
 * callback (a replay, or the upstream's retry) is answered 204 without a poll. The URL is valid
 * while its task is open there: afterwards 403 link_expired, whatever the token.
 */
export async function registerUpstreamCallbacks(app: FastifyInstance, ctx: Context): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: CALLBACK_BODY_LIMIT }, (_request, body, done) =>
      done(null, body),
    );
    scope.post<{ Params: { deployment: string; taskId: string }; Querystring: { sig?: string } }>(
      `${UPSTREAM_CALLBACK_PATH}/:deployment/:taskId`,
      async (request, reply) => {
        const { deployment: name, taskId } = request.params;
        const expected = Buffer.from(upstreamCallbackToken(ctx.secret, name, taskId));
        const given = Buffer.from(String(request.query.sig ?? ''));
        if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw new ApiError('unauthorized');
        const deployment = ctx.deployments.byName(name);
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        if (deployment?.verifyCallback && !(await deployment.verifyCallback({ headers: request.headers, body })))
          throw new ApiError('unauthorized');
        const outcome = await wakeOnUpstreamCallback(ctx.db, taskId, name, ctx.clock.now());
        // The URL is valid until its task ends: afterwards it is refused, never a poll.
        if (outcome === 'ended') throw new ApiError('link_expired');
        if (outcome === 'woken') ctx.wakeWorkers();
        return reply.status(204).send();
      },
    );
  });
}

import type { FastifyInstance } from 'fastify';
import { catalogue } from '../../generated/catalogue.js';
import { formatMessage } from '../../generated/errors.js';
import { creditsToUsd } from '../../generated/support.js';
import { ownerOf } from '../assets/library.js';
import { applyAssetReferences } from '../assets/references.js';
import { outboundPolicy } from '../config.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import { acceptTask } from '../tasks/create-task.js';
import { prepareRequest } from '../tasks/prepare-request.js';
import { taskRecord } from '../tasks/task-record.js';
import { sessionRoute, type SessionRequest } from './session-http.js';
import { playgroundCaller } from './users.js';

async function wallet(ctx: Context, accountId: string) {
  const w = await ctx.db.kysely.selectFrom('wallets').select(['available', 'held', 'spent']).where('account_id', '=', accountId).executeTakeFirstOrThrow();
  return { ...w, availableCost: creditsToUsd(w.available) };
}

/** Playground requests carry only model and input: no callback, no quote id (the page shows the live price). */
function playgroundBody(body: Record<string, unknown>) {
  return { model: body.model, input: body.input };
}

/** The playground's JSON API: models with schemas, live quote, create (held from the playground wallet), status. */
export function registerPlaygroundApi(app: FastifyInstance, ctx: Context) {
  sessionRoute(app, ctx, 'GET', '/playground/api/models', async () =>
    [...catalogue.values()].map(({ info }) => ({
      id: info.id,
      title: info.title,
      mode: info.mode,
      summary: info.summary,
      inputSchema: info.inputSchema,
      referenceFields: info.referenceFields,
      markerDescription: info.markerDescription,
      markerExample: info.markerExample,
      minimumFor5sCredits: info.pricing.minimumFor5sCredits,
    })),
  );

  sessionRoute(app, ctx, 'GET', '/playground/api/balance', async ({ user }) => wallet(ctx, user.playgroundAccountId));

  sessionRoute(app, ctx, 'POST', '/playground/api/quote', async ({ user, body, language }) => {
    const caller = await playgroundCaller(ctx.db, user);
    const request = await prepareRequest(playgroundBody(body), outboundPolicy(ctx.config));
    await applyAssetReferences(ctx, ownerOf(caller), request);
    const balance = await wallet(ctx, caller.accountId);
    const { price } = request;
    return {
      model: request.model.info.id,
      estimatedCredits: price.estimatedCredits,
      estimatedCost: creditsToUsd(price.estimatedCredits),
      maxCredits: price.maxCredits,
      billableSeconds: price.billableSeconds,
      affordable: balance.available >= price.maxCredits,
      available: balance.available,
      warnings: request.warnings.map((w) => ({ code: w.code, path: w.path, message: formatMessage(w.message, language) })),
    };
  });

  sessionRoute(app, ctx, 'POST', '/playground/api/tasks', async ({ user, body, language, request }) => {
    const caller = await playgroundCaller(ctx.db, user);
    const prepared = await prepareRequest(playgroundBody(body), outboundPolicy(ctx.config));
    const created = await acceptTask(ctx, caller, prepared, { requestId: request.id, idempotencyScope: 'create' });
    return taskRecord(ctx, created.task, language);
  });

  sessionRoute(app, ctx, 'GET', '/playground/api/tasks/:taskId', async ({ user, params, language }: SessionRequest) => {
    const row = await ctx.db.kysely.selectFrom('tasks').selectAll().where('id', '=', params.taskId).where('account_id', '=', user.playgroundAccountId).executeTakeFirst();
    if (!row) throw new ApiError('task_not_found', {}, [], 'taskId');
    return taskRecord(ctx, row, language);
  });
}

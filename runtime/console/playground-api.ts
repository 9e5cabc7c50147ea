import type { FastifyInstance } from 'fastify';
import { catalogue, type CatalogueModel } from '../../generated/catalogue.js';
import { formatMessage } from '../../generated/errors.js';
import { creditsToUsd } from '../../generated/support.js';
import { ownerOf } from '../assets/library.js';
import { applyAssetReferences } from '../assets/references.js';
import { outboundPolicy } from '../config.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import { walletOf } from '../ledger/wallets.js';
import { acceptTask } from '../tasks/create-task.js';
import { prepareRequest } from '../tasks/prepare-request.js';
import { taskRecord } from '../tasks/task-record.js';
import { taskOfAccount } from '../tasks/task-rows.js';
import { sessionRoute, type SessionRequest } from './session-http.js';
import { playgroundCaller } from './users.js';

async function wallet(ctx: Context, accountId: string) {
  const { available, held, spent } = await walletOf(ctx.db.kysely, accountId);
  return { available, held, spent, availableCost: creditsToUsd(available) };
}

/** Playground requests carry only model and input: no callback, no quote id (the page shows the live price). */
function playgroundBody(body: Record<string, unknown>) {
  return { model: body.model, input: body.input };
}

/**
 * The most a model's defaults hold (maxCredits) when a prompt is all it needs, or null when its
 * defaults cannot run alone (a required reference file, a source clip). The playground opens on the
 * model whose defaults hold least within the user's balance: chosen by price, never by name.
 */
function defaultsMaxCredits(model: CatalogueModel): number | null {
  const checked = model.validate({ prompt: 'A lighthouse at dusk' });
  return checked.ok ? model.price(checked.value).maxCredits : null;
}

/** The playground's JSON API: models with schemas, live quote, create (held from the playground wallet), status. */
export function registerPlaygroundApi(app: FastifyInstance, ctx: Context) {
  sessionRoute(app, ctx, 'GET', '/playground/api/models', async () =>
    [...catalogue.values()]
      .map((model) => ({ info: model.info, defaultsMaxCredits: defaultsMaxCredits(model) }))
      .map(({ info, defaultsMaxCredits }) => ({
        id: info.id,
        title: info.title,
        mode: info.mode,
        summary: info.summary,
        inputSchema: info.inputSchema,
        referenceFields: info.referenceFields,
        markerDescription: info.markerDescription,
        markerExample: info.markerExample,
        minimumFor5sCredits: info.pricing.minimumFor5sCredits,
        defaultsMaxCredits,
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
      warnings: request.warnings.map((w) => ({
        code: w.code,
        path: w.path,
        message: formatMessage(w.message, language),
      })),
    };
  });

  sessionRoute(app, ctx, 'POST', '/playground/api/tasks', async ({ user, body, language, request }) => {
    const caller = await playgroundCaller(ctx.db, user);
    const prepared = await prepareRequest(playgroundBody(body), outboundPolicy(ctx.config));
    const created = await acceptTask(ctx, caller, prepared, { requestId: request.id, idempotencyScope: 'create' });
    return taskRecord(ctx, created.task, language);
  });

  sessionRoute(app, ctx, 'GET', '/playground/api/tasks/:taskId', async ({ user, params, language }: SessionRequest) => {
    const row = await taskOfAccount(ctx.db.kysely, user.playgroundAccountId, params.taskId);
    if (!row) throw new ApiError('task_not_found', { param: 'taskId' });
    return taskRecord(ctx, row, language);
  });
}

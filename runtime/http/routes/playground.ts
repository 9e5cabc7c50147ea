import type { Handlers } from '../../../generated/console/routes.js';
import { catalogue, type CatalogueModel } from '../../../generated/catalogue.js';
import { formatMessage } from '../../../generated/errors.js';
import { creditsToUsd } from '../../../generated/support.js';
import { priceUnderBook, pricingUnderBook } from '../../accounts/book-price.js';
import { priceBookOfAccount } from '../../accounts/price-book.js';
import { ownerOf, toAsset } from '../../assets/library.js';
import { applyAssetReferences } from '../../assets/references.js';
import { outboundPolicy } from '../../config.js';
import { declaredSize, fileNameOf, playgroundLibrary, referenceKind } from '../../console/playground-uploads.js';
import { playgroundCaller } from '../../console/users.js';
import type { Context } from '../../context.js';
import { ApiError } from '../../errors.js';
import { declaredKind } from '../../files/probe.js';
import { commitUpload, createTicket, receiveUpload } from '../../files/uploads.js';
import { acceptTask } from '../../tasks/create-task.js';
import { prepareRequest } from '../../tasks/prepare-request.js';
import { taskRecord } from '../../tasks/task-record.js';
import { taskOfAccount } from '../../tasks/task-rows.js';
import type { ConsoleRequests } from '../api-request.js';

type PlaygroundHandlers = Pick<
  Handlers<ConsoleRequests>,
  | 'playgroundModels'
  | 'playgroundBalance'
  | 'playgroundQuote'
  | 'playgroundCreateTask'
  | 'playgroundTask'
  | 'playgroundUpload'
>;

const ok = <T>(data: T) => ({ status: 200, data });

async function wallet(ctx: Context, accountId: string) {
  const { available, held, spent } = await ctx.ledger.balance(ctx.db, accountId);
  return { available, held, spent, availableCost: creditsToUsd(available) };
}

/** Playground requests carry only model and input: no callback, no quote id (the page shows the live price). */
function playgroundBody(body: { model: string; input: Record<string, unknown> }) {
  return { model: body.model, input: body.input };
}

/**
 * The most a model's defaults hold (maxCredits) when a prompt is all it needs, or null when its
 * defaults cannot run alone (a required reference file, a source clip), at the playground
 * account's price book: what quote answers for that account. The playground opens on the model
 * whose defaults hold least within the user's balance: chosen by price, never by name.
 */
function defaultsMaxCredits(model: CatalogueModel, book: string | null): number | null {
  const checked = model.validate({ prompt: 'A lighthouse at dusk' });
  return checked.ok ? priceUnderBook(model, checked.value, {}, book).maxCredits : null;
}

/** The playground's operations: models with schemas, live quote, create (held from the playground wallet), status, uploads. */
export const playgroundHandlers: PlaygroundHandlers = {
  async playgroundModels(req) {
    // The picker's prices are the account's, as quote answers them (issue 40), not the published ones.
    const book = await priceBookOfAccount(req.ctx.db.kysely, req.user.playgroundAccountId);
    return ok(
      [...catalogue.values()]
        .map((model) => ({
          info: { ...model.info, pricing: pricingUnderBook(model.info.id, model.info.pricing, book) },
          defaultsMaxCredits: defaultsMaxCredits(model, book),
        }))
        .map(({ info, defaultsMaxCredits }) => ({
          id: info.id,
          title: info.title,
          mode: info.mode,
          summary: info.summary,
          inputSchema: info.inputSchema,
          referenceFields: info.referenceFields,
          markerDescription: info.markerDescription,
          markerExample: info.markerExample,
          // "From" on the picker: what a task costs without an optional reference list (a rate that needs a reference video is not where a prompt starts).
          minimumFor5sCredits: info.pricing.minimumFor5sWithoutReferencesCredits,
          defaultsMaxCredits,
        })),
    );
  },

  async playgroundBalance(req) {
    return ok(await wallet(req.ctx, req.user.playgroundAccountId));
  },

  async playgroundQuote(req) {
    const { ctx, language } = req;
    const caller = await playgroundCaller(ctx.db, req.user);
    const request = await prepareRequest(
      playgroundBody(req.body),
      outboundPolicy(ctx.config),
      undefined,
      caller.priceBook,
    );
    await applyAssetReferences(ctx, ownerOf(caller), request);
    const balance = await wallet(ctx, caller.accountId);
    const { price } = request;
    return ok({
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
    });
  },

  async playgroundCreateTask(req) {
    const { ctx } = req;
    const caller = await playgroundCaller(ctx.db, req.user);
    const prepared = await prepareRequest(
      playgroundBody(req.body),
      outboundPolicy(ctx.config),
      undefined,
      caller.priceBook,
    );
    const created = await acceptTask(ctx, caller, prepared, { requestId: req.requestId, idempotencyScope: 'create' });
    return ok(await taskRecord(ctx, created.task, req.language));
  },

  async playgroundTask(req) {
    const row = await taskOfAccount(req.ctx.db.kysely, req.user.playgroundAccountId, req.params.taskId);
    if (!row) throw new ApiError('task_not_found', { param: 'taskId' });
    return ok(await taskRecord(req.ctx, row, req.language));
  },

  /**
   * One file for one reference field of the playground form, sent as the raw request body
   * (Content-Type: its type, X-File-Name: its name). It goes through the upload flow of the API in
   * one request: a ticket for the declared type and size (accepted kinds, the size cap, the storage
   * plan), the bytes counted and sniffed as they arrive, then the probe and the commit. Every
   * refusal is the API's business code in the session's language. Answers the Asset (its `uri` goes
   * into the field).
   */
  async playgroundUpload(req) {
    const { ctx, user } = req;
    const kind = referenceKind(req.query.model, req.query.field);
    const contentType = req.rawHeader('content-type') ?? '';
    const fileName = fileNameOf(req.headers['X-File-Name']);
    const size = declaredSize(req.rawHeader('content-length'));
    if (declaredKind(contentType, fileName) !== kind)
      throw new ApiError('file_type_not_allowed', { param: 'Content-Type' });
    const owner = playgroundLibrary(user);
    const caller = await playgroundCaller(ctx.db, user);
    // The bytes are in this request: the service receives them and streams them to the store, whatever the store.
    const ticket = await createTicket(ctx, owner, caller.keyId, { fileName, contentType, size }, 'service');
    const signed = new URL(ticket.uploadUrl);
    await receiveUpload(ctx, {
      fileId: ticket.fileId,
      expires: signed.searchParams.get('expires') ?? undefined,
      sig: signed.searchParams.get('sig') ?? undefined,
      contentType,
      contentLength: String(size),
      body: req.raw.body,
    });
    return ok(toAsset(ctx, await commitUpload(ctx, owner, ticket.fileId, fileName)));
  },
};

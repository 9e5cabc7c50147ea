import { catalogue } from '../../../generated/catalogue.js';
import { requestRules } from '../../../generated/requests/index.js';
import type { Handlers } from '../../../generated/routes.js';
import { formFields, readForm, type UploadedFile } from '../../compat/form.js';
import { dropUnusedUpload, resolveReference } from '../../compat/uploads.js';
import { videoObjects } from '../../compat/video-object.js';
import { mapVideoRequest, renameIssues, type VideoFields } from '../../compat/video-request.js';
import { outboundPolicy } from '../../config.js';
import { ApiError, fieldIssue, invalidInput } from '../../errors.js';
import { requestFingerprint } from '../../idempotency/fingerprint.js';
import { newOrderedId } from '../../ids.js';
import { acceptTask, type Created } from '../../tasks/create-task.js';
import { applyModelSunset } from '../../tasks/model-sunset.js';
import { prepareRequest, type PreparedRequest } from '../../tasks/prepare-request.js';
import { sourceClipsOf } from '../../tasks/source-clip.js';
import { outputAssets, type TaskRow } from '../../tasks/task-record.js';
import { purgeTaskContent, taskOfCaller } from '../../tasks/task-queries.js';
import type { ApiRequest, ApiRequests } from '../api-request.js';
import { checkBody } from '../request-input.js';
import { tasksOfKeyAfter } from '../../tasks/task-rows.js';
import { coolingRefusal } from '../cooling-refusal.js';
import { debtRefusal } from '../debt-refusal.js';

type CompatHandlers = Pick<
  Handlers<ApiRequests>,
  'createVideo' | 'listVideos' | 'retrieveVideo' | 'deleteVideo' | 'downloadVideoContent' | 'listCompatModels'
>;

const NO_STORE = { 'Cache-Control': 'no-store' };

/** The same error with another `param` (the compat names: `video_id` for the path's task id). */
function withParam(error: unknown, param: string): unknown {
  return error instanceof ApiError
    ? new ApiError(error.errorName, {
        params: error.params,
        fieldErrors: error.fieldErrors,
        param,
        headers: error.headers,
      })
    : error;
}

/** A video of the calling key; unknown, another account's and a sibling key's are one 404. */
async function videoOfCaller(
  req: ApiRequest<'retrieveVideo' | 'deleteVideo' | 'downloadVideoContent'>,
): Promise<TaskRow> {
  try {
    return await taskOfCaller(req.ctx, req.caller, req.params.video_id);
  } catch (error) {
    throw withParam(error, 'video_id');
  }
}

/** Every string equal to `from` replaced by `to`, at any depth (the signed upload link in a fingerprint). */
function replaceDeep(value: unknown, from: string, to: string): unknown {
  if (value === from) return to;
  if (Array.isArray(value)) return value.map((v) => replaceDeep(v, from, to));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceDeep(v, from, to)]));
  return value;
}

/**
 * The body as fields, its envelope checked from the contract (CreateVideoRequest: the compat
 * fields; the model's own fields beside them are its validator's): JSON as sent, checked before the
 * handler like every JSON body (request-input.ts); multipart/form-data read into nested fields plus
 * the file, then checked here with the same rule, before the model's fields are coerced (the compat
 * fields are never coerced: their string forms are what the contract accepts).
 */
async function readBody(
  req: ApiRequest<'createVideo'>,
): Promise<{ fields: VideoFields; file?: UploadedFile; fromForm: boolean }> {
  const request = req.raw;
  if (typeof request.isMultipart === 'function' && request.isMultipart()) {
    const { entries, file } = await readForm(request, req.ctx.config.bodyLimitBytes);
    if (file && file.field !== 'input_reference')
      throw invalidInput([fieldIssue(file.field, 'unknown_field', 'unknown_field')]);
    // Array indexes are bounded by the model's schema (maxItems): the model is read first.
    const model = entries.find(([key]) => key === 'model')?.[1] ?? req.ctx.config.compatDefaultModel;
    const fields = formFields(entries, catalogue.get(model)?.info.inputSchema as Record<string, unknown> | undefined);
    checkBody(requestRules.createVideo.body!, fields);
    return { fields: fields as VideoFields, file, fromForm: true };
  }
  return { fields: req.body, fromForm: false };
}

export const compatHandlers: CompatHandlers = {
  /**
   * POST /v1/videos: the compat fields mapped onto the model's input, then exactly createTask's
   * path: the generated validator and price (prepareRequest), the hold in the same ledger and the
   * Idempotency-Key in the same key space (scope 'create') as /api/v1/jobs/createTask.
   * An uploaded reference is stored only after validation, just before the hold, under the new
   * task's id; a refusal from there on (402, 409, any error) or a replay removes it again.
   */
  async createVideo(req) {
    const { ctx, caller } = req;
    const taskId = newOrderedId('task');
    const idempotencyKey = req.headers['Idempotency-Key'];
    const retentionSeconds = req.headers['X-Service-Retention'];
    const { fields, file, fromForm } = await readBody(req);
    const mapped = await mapVideoRequest(fields, file !== undefined, {
      defaultModel: ctx.config.compatDefaultModel,
      fromForm,
      resolveReference: (spec) => resolveReference(ctx, caller.accountId, taskId, spec, file?.bytes),
    });
    let request: PreparedRequest;
    try {
      request = await prepareRequest(
        mapped.body,
        outboundPolicy(ctx.config),
        sourceClipsOf(ctx, caller),
        caller.priceBook,
      );
    } catch (error) {
      throw error instanceof ApiError ? renameIssues(error, mapped) : error;
    }
    const token = mapped.reference?.stableToken;
    if (token)
      request = {
        ...request,
        fingerprint: requestFingerprint(
          request.model.info.id,
          replaceDeep(request.input, mapped.reference!.url, token),
          request.callbackUrl,
        ),
      };
    const upload = mapped.reference?.upload;
    let created: Created | undefined;
    try {
      if (upload) await ctx.blobs.put(upload.key, upload.bytes);
      // A retired model, or one whose every deployment is cooling down, is refused just before the hold, as on createTask (a replay keeps its task).
      const cooling = await coolingRefusal(ctx, request, caller.accountId);
      const debt = await debtRefusal(ctx, caller.accountId);
      const beforeHold = () => {
        applyModelSunset(request, ctx.clock.now());
        if (debt) throw debt;
        if (cooling) throw cooling;
      };
      created = await acceptTask(ctx, caller, request, {
        requestId: req.requestId,
        idempotencyKey,
        idempotencyScope: 'create',
        retentionSeconds,
        taskId,
        beforeHold,
      });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // The openai SDK retries 409s; a key reused for another request will not get better.
      if (error.status === 409 && error.errorName !== 'idempotency_in_progress') {
        throw new ApiError(error.errorName, {
          params: error.params,
          fieldErrors: error.fieldErrors,
          param: error.param,
          headers: {
            ...error.headers,
            'x-should-retry': 'false',
          },
        });
      }
      // Acceptance checks (service://a/ assets of the library) name input paths too.
      throw renameIssues(error, mapped);
    } finally {
      // Nothing is kept from a refused request; a replay answers with the first task's own upload.
      if (upload && !(created && !created.replayed)) {
        await dropUnusedUpload(ctx, taskId, upload.key).catch((error: unknown) =>
          req.raw.log.error({ err: error, key: upload.key }, 'refused upload not removed'),
        );
      }
    }
    const [video] = await videoObjects(ctx, [created.task], req.language);
    const headers: Record<string, string> = { ...NO_STORE };
    if (created.replayed) headers['Idempotent-Replayed'] = 'true';
    return { status: 200, data: video, headers };
  },

  async retrieveVideo(req) {
    const row = await videoOfCaller(req);
    const [video] = await videoObjects(req.ctx, [row], req.language);
    return { status: 200, data: video, headers: NO_STORE };
  },

  /** The key's videos by creation time; `after` is a video id, as the openai SDK's cursor page sends it. */
  async listVideos(req) {
    const { ctx, caller } = req;
    const { limit, order, after } = req.query;
    const rows = await tasksOfKeyAfter(ctx.db.kysely, caller.keyId, { afterId: after, order, limit: limit + 1 });
    if (!rows) throw new ApiError('invalid_parameter', { param: 'after' });
    const page = rows.slice(0, limit);
    const data = await videoObjects(ctx, page, req.language);
    return {
      status: 200,
      data: {
        object: 'list' as const,
        data,
        first_id: data[0]?.id ?? null,
        last_id: data[data.length - 1]?.id ?? null,
        has_more: rows.length > limit,
      },
      headers: NO_STORE,
    };
  },

  /** Purge: the content goes, the billing evidence stays; a video not yet finished is a 400. */
  async deleteVideo(req) {
    const row = await videoOfCaller(req);
    try {
      await purgeTaskContent(req.ctx, row);
    } catch (error) {
      throw withParam(error, 'video_id');
    }
    return { status: 200, data: { id: row.id, object: 'video.deleted' as const, deleted: true as const } };
  },

  /** 302 to a fresh signed link of the video; the simulator makes no thumbnails or spritesheets (404). */
  async downloadVideoContent(req) {
    const { variant } = req.query;
    const row = await videoOfCaller(req);
    const assets = row.state === 'succeeded' ? (outputAssets(req.ctx, row) ?? []) : [];
    const asset = variant === 'video' ? (assets.find((a) => a.mime.startsWith('video/')) ?? assets[0]) : undefined;
    if (!asset) throw new ApiError('file_not_found', { param: variant === 'video' ? 'video_id' : 'variant' });
    return { status: 302, raw: Buffer.alloc(0), headers: { Location: asset.url, ...NO_STORE } };
  },

  /** The callable models in the third-party list shape; `created` is 0 (the catalogue has no dates). */
  async listCompatModels(req) {
    const data = [...catalogue.values()]
      .filter((m) => req.ctx.deployments.serves(m.info))
      .map((m) => ({ id: m.info.id, object: 'model' as const, created: 0, owned_by: m.info.vendor }));
    return { status: 200, data: { object: 'list' as const, data } };
  },
};

import type { Selectable } from 'kysely';
import { formatMessage, TASK_ERRORS, type Language, type TaskErrorCode } from '../../generated/errors.js';
import { creditsToUsd, type Warning } from '../../generated/support.js';
import { signMediaPath } from '../blobs/blob-store.js';
import type { Context } from '../context.js';
import type { Database } from '../storage/schema.js';
import type { TaskState } from './states.js';

export type TaskRow = Selectable<Database['tasks']>;

export interface StoredOutput {
  key: string;
  mime: string;
  /** Videos and sound; absent for an image (a returned last frame). */
  durationSeconds?: number;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Signed output links, fresh on every read (about 20 minutes). */
export function outputAssets(ctx: Context, row: TaskRow) {
  if (!row.output_json) return null;
  const expiresAt = ctx.clock.now() + ctx.config.outputLinkTtlSeconds * 1000;
  return (JSON.parse(row.output_json) as StoredOutput[]).map((o) => ({
    url: `${ctx.config.publicUrl}${signMediaPath(ctx.secret, o.key, expiresAt)}`,
    mime: o.mime,
    durationSeconds: o.durationSeconds,
    expiresAt: new Date(expiresAt).toISOString(),
  }));
}

/** errorMessage: a model's own reason as stored (English), else the catalogue text in the language. */
export function errorMessage(row: TaskRow, language: Language): string | undefined {
  if (!row.error_code) return undefined;
  if (row.error_code === 'generation_failed' && row.error_message) return row.error_message;
  if (row.error_code in TASK_ERRORS) {
    return formatMessage(
      { key: row.error_code as TaskErrorCode, params: { detail: row.error_message ?? '' } },
      language,
    );
  }
  return row.error_message ?? row.error_code;
}

/**
 * The task record of recordInfo, of a `wait` 200 and of a webhook body. `credits` is the hold
 * until the task settles, then the charge (0 for failed and expired tasks, whose hold is released).
 */
export function taskRecord(ctx: Context, row: TaskRow, language: Language) {
  const settled = row.settled === 1;
  const credits = settled ? (row.charged_credits ?? 0) : row.max_credits;
  const assets = outputAssets(ctx, row);
  const message = errorMessage(row, language);
  return {
    taskId: row.id,
    model: row.model,
    state: row.state as TaskState,
    progress: row.progress,
    input: row.input_json ? (JSON.parse(row.input_json) as Record<string, unknown>) : null,
    output: assets ? { assets } : null,
    credits,
    cost: creditsToUsd(credits),
    settled,
    estimatedCredits: row.estimated_credits,
    estimatedCost: creditsToUsd(row.estimated_credits),
    maxCredits: row.max_credits,
    maxCharge: creditsToUsd(row.max_credits),
    ...(row.error_code ? { errorCode: row.error_code, errorMessage: message } : {}),
    warnings: (JSON.parse(row.warnings_json) as Warning[]).map((w) => ({
      code: w.code,
      path: w.path,
      message: formatMessage(w.message, language),
    })),
    retryOf: row.retry_of,
    requestId: row.request_id,
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
    startedAt: iso(row.started_at),
    finishedAt: iso(row.finished_at),
    expiresAt: iso(row.deadline_at)!,
    purgedAt: iso(row.purged_at),
  };
}

export type TaskRecord = ReturnType<typeof taskRecord>;

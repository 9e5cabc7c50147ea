import { catalogue } from '../../generated/catalogue.js';
import type { Language } from '../../generated/errors.js';
import type { components } from '../../generated/sdk/types.js';
import type { Context } from '../context.js';
import { purgeDueTimes } from '../queue/work-items.js';
import type { StoredOutput, TaskRow } from '../tasks/task-record.js';
import { errorMessage } from '../tasks/task-record.js';
import { sizeOfInput } from './video-request.js';

export type Video = components['schemas']['Video'];

const STATUS: Record<string, Video['status']> = {
  queued: 'queued',
  running: 'in_progress',
  succeeded: 'completed',
  failed: 'failed',
  expired: 'failed',
  canceled: 'failed',
};

const unix = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

/**
 * When each task's content is due to be destroyed by retention (its pending purge work item), in
 * ms. That is the Video's `expires_at`: the moment the downloadable assets go away.
 */
export async function contentExpiry(ctx: Context, rows: TaskRow[]): Promise<Map<string, number>> {
  const ids = rows.filter((r) => r.output_json !== null && r.purged_at === null).map((r) => r.id);
  return purgeDueTimes(ctx.db.kysely, ids);
}

/** A task in the compatible layer's Video shape; `id` is the task id. */
export function videoObject(row: TaskRow, language: Language, expiresAtMs: number | undefined): Video {
  const input = row.input_json ? (JSON.parse(row.input_json) as Record<string, unknown>) : null;
  const outputs = row.output_json ? (JSON.parse(row.output_json) as StoredOutput[]) : [];
  const terminal = row.finished_at !== null;
  // The length actually produced once known (a -1 "model chooses" resolves then), else the one asked for.
  const produced = outputs[0]?.durationSeconds;
  const requested =
    typeof input?.duration_seconds === 'number' && input.duration_seconds > 0 ? input.duration_seconds : undefined;
  const seconds = produced ?? requested;
  const code = row.error_code;
  return {
    id: row.id,
    object: 'video',
    model: row.model,
    status: STATUS[row.state] ?? 'failed',
    progress: row.state === 'succeeded' ? 100 : Math.max(0, Math.min(100, row.progress)),
    created_at: unix(row.created_at)!,
    completed_at: terminal ? unix(row.finished_at) : null,
    expires_at: expiresAtMs === undefined ? null : unix(expiresAtMs),
    seconds: seconds === undefined ? '' : String(seconds),
    size: sizeOfInput(catalogue.get(row.model), input),
    prompt: typeof input?.prompt === 'string' ? input.prompt : null,
    error: code ? { code, message: errorMessage(row, language) ?? code } : null,
    remixed_from_video_id: null,
  };
}

export async function videoObjects(ctx: Context, rows: TaskRow[], language: Language): Promise<Video[]> {
  const expiry = await contentExpiry(ctx, rows);
  return rows.map((row) => videoObject(row, language, expiry.get(row.id)));
}

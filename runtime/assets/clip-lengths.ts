import { catalogue } from '../../generated/catalogue.js';
import type { TaskRow } from '../tasks/task-record.js';

/**
 * The lengths of a task's billed reference clips (the catalogue's referenceClips field) are
 * measured by the check before the submit (runtime/assets/run-check.ts) and kept on the task while
 * it is queued (runtime/tasks/submit-marks.ts `keepReferenceClipSeconds`): settlement bills them,
 * so nothing is fetched after the provider's job (a link that answers once cannot turn a finished
 * job into a free one).
 */

/**
 * The clip lengths settlement bills: those the check kept. A model that bills clips, with clips
 * sent and no kept lengths (a task submitted before the lengths were kept), is `unmeasured`: the
 * task fails, hold released, never settled at the hold's assumed length.
 */
export function settledClipSeconds(task: TaskRow): { seconds?: number[] } | { unmeasured: string } {
  const field = catalogue.get(task.model)?.info.pricing.referenceClips?.field;
  if (!field || !task.input_json) return {};
  const clips = (JSON.parse(task.input_json) as Record<string, unknown>)[field];
  if (!Array.isArray(clips) || clips.length === 0) return {};
  const kept = task.reference_clip_seconds_json ? (JSON.parse(task.reference_clip_seconds_json) as unknown) : null;
  if (!Array.isArray(kept) || kept.length !== clips.length || !kept.every((s) => typeof s === 'number' && s > 0))
    return { unmeasured: `input.${field}` };
  return { seconds: kept as number[] };
}

import type { Engine } from '../storage/dialect.js';
import type { Trx } from '../storage/executor.js';
import { preparedWrite } from '../storage/prepared-write.js';

/** What a resolution writes on its task besides the times: one shape per terminal state. */
export type Resolution =
  | {
      state: 'succeeded';
      progress: 100;
      charged_credits: number;
      billed_seconds: number;
      output_json: string;
      upstream_cost_micros: number | null;
      warnings_json: string;
    }
  | { state: 'failed'; charged_credits: 0; error_code: string; error_message: string | null; warnings_json: string }
  | { state: 'expired'; charged_credits: 0; error_code: 'deadline_exceeded'; error_message: null };

/** Only while the task is still queued or running: the guard makes resolution happen once. */
const OPEN = `where "id" = ? and "state" in ('queued', 'running')`;
const TIMES = `"settled" = 1, "finished_at" = ?, "updated_at" = ?`;

const SUCCEEDED = preparedWrite<[number, number, string, number | null, string, number, number, string]>(
  'resolution-succeeded',
  `update "tasks" set "state" = 'succeeded', "progress" = 100, "charged_credits" = ?, "billed_seconds" = ?, "output_json" = ?, "upstream_cost_micros" = ?, "warnings_json" = ?, ${TIMES} ${OPEN}`,
);
const FAILED = preparedWrite<[string, string | null, string, number, number, string]>(
  'resolution-failed',
  `update "tasks" set "state" = 'failed', "charged_credits" = 0, "error_code" = ?, "error_message" = ?, "warnings_json" = ?, ${TIMES} ${OPEN}`,
);
const EXPIRED = preparedWrite<[number, number, string]>(
  'resolution-expired',
  `update "tasks" set "state" = 'expired', "charged_credits" = 0, "error_code" = 'deadline_exceeded', "error_message" = null, ${TIMES} ${OPEN}`,
);

/**
 * A resolution's write of the task (./resolve-task.ts), in its transaction: the terminal state and
 * what goes with it, settled, at `now`, one fixed statement per terminal state (no query built per
 * task). False when the task was no longer queued or running (another resolution got there first).
 */
export async function writeTerminalState(
  trx: Trx,
  engine: Engine,
  taskId: string,
  resolution: Resolution,
  now: number,
): Promise<boolean> {
  const r = resolution;
  const changed =
    r.state === 'succeeded'
      ? await SUCCEEDED.runIn(
          trx,
          engine,
          r.charged_credits,
          r.billed_seconds,
          r.output_json,
          r.upstream_cost_micros,
          r.warnings_json,
          now,
          now,
          taskId,
        )
      : r.state === 'failed'
        ? await FAILED.runIn(trx, engine, r.error_code, r.error_message, r.warnings_json, now, now, taskId)
        : await EXPIRED.runIn(trx, engine, now, now, taskId);
  return changed === 1;
}

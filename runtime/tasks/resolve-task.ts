import { catalogue } from '../../generated/catalogue.js';
import { priceUnderBook } from '../accounts/book-price.js';
import type { TaskErrorCode } from '../../generated/errors.js';
import type { Warning } from '../../generated/support.js';
import type { Context } from '../context.js';
import type { Trx } from '../storage/executor.js';
import { writeTransaction } from '../storage/write-transaction.js';
import { scheduleWork } from '../queue/schedule-work.js';
import { endTaskWork } from '../queue/work-items.js';
import type { StoredOutput, TaskRow } from './task-record.js';
import { type Resolution, writeTerminalState } from './terminal-state.js';

/**
 * Work done in the resolving transaction by other parts (webhook deliveries, upstream cancels), so
 * that a crash between the terminal state and its announcements loses nothing. A service's hooks
 * are given to `createService` and run in the order given (`ctx.resolutionHooks`).
 */
export type ResolutionHook = (trx: Trx, task: TaskRow, now: number, ctx: Context) => Promise<void>;

async function resolveOnce(
  ctx: Context,
  taskId: string,
  apply: (trx: Trx, task: TaskRow, now: number) => Promise<Resolution>,
): Promise<boolean> {
  const now = ctx.clock.now();
  const resolved = await writeTransaction(ctx.db, async (trx) => {
    // PostgreSQL: lock the row first, so a concurrent resolution waits here and then reads the
    // terminal state (false) instead of failing the state guard below. SQLite transactions are
    // IMMEDIATE (serialized) already.
    const task = await trx
      .selectFrom('tasks')
      .selectAll()
      .where('id', '=', taskId)
      .$if(ctx.db.engine === 'postgres', (q) => q.forUpdate())
      .executeTakeFirst();
    if (!task || (task.state !== 'queued' && task.state !== 'running')) return false;
    const changes = await apply(trx, task, now);
    // The state guard makes resolution happen once, whoever gets here first.
    if (!(await writeTerminalState(trx, ctx.db.engine, taskId, changes, now)))
      throw new Error(`task ${taskId} resolved concurrently`);
    const written = { ...changes, settled: 1, finished_at: now, updated_at: now };
    await endTaskWork(trx, taskId, ['run', 'poll', 'expire'], now);
    if (task.retention_seconds !== null || ctx.config.retentionSeconds > 0) {
      // A service retention of 0 means no service-wide limit: then the task's own retention alone applies.
      const seconds = Math.min(
        task.retention_seconds ?? Number.MAX_SAFE_INTEGER,
        ctx.config.retentionSeconds > 0 ? ctx.config.retentionSeconds : Number.MAX_SAFE_INTEGER,
      );
      await scheduleWork(trx, now, { kind: 'purge', taskId, dueAt: now + seconds * 1000 });
    }
    // The row as written: the one read above (locked, or under SQLite's write lock) with this update's values.
    const final: TaskRow = { ...task, ...written };
    ctx.faults.reach('resolve.state-written'); // hold resolved and state written, deliveries not yet: all of it rolls back
    for (const hook of ctx.resolutionHooks) await hook(trx, final, now, ctx);
    return true;
  });
  if (resolved) ctx.faults.reach('resolve.committed'); // terminal state and deliveries committed, nobody told yet
  if (resolved) ctx.events.resolved(taskId);
  return resolved;
}

export interface SuccessFacts {
  outputs: StoredOutput[];
  outputSeconds: number;
  referenceClipSeconds?: (number | null)[];
  /** Measured length of the model's source clip, if it works on one. */
  sourceClipSeconds?: number;
  /** What the operator pays the upstream for the task (millionths of a USD), when its deployment declares a cost. */
  upstreamCostMicros?: number | null;
  /** Warnings the settlement adds to the task's (a result settled at what was delivered). */
  warnings?: Warning[];
}

/** The task's warnings with `added` after them, as stored (the row was read under the resolution's lock). */
function withWarnings(task: TaskRow, added: Warning[] | undefined): string {
  if (!added?.length) return task.warnings_json;
  return JSON.stringify([...(JSON.parse(task.warnings_json) as Warning[]), ...added]);
}

/** running -> succeeded: the hold is settled to the actual charge, never above the hold. */
export function succeedTask(ctx: Context, taskId: string, facts: SuccessFacts): Promise<boolean> {
  return resolveOnce(ctx, taskId, async (trx, task, now) => {
    const model = catalogue.get(task.model);
    const input = JSON.parse(task.input_json ?? '{}') as Record<string, unknown>;
    // At the book the task was accepted under, never the account's current one.
    const price = priceUnderBook(
      model!,
      input,
      {
        outputSeconds: facts.outputSeconds,
        referenceClipSeconds: facts.referenceClipSeconds,
        sourceClipSeconds: facts.sourceClipSeconds,
      },
      task.price_book,
    );
    const charged = (await ctx.ledger.settle(trx, taskId, price.estimatedCredits, now)) ?? 0;
    return {
      state: 'succeeded',
      progress: 100,
      charged_credits: charged,
      billed_seconds: price.billableSeconds,
      output_json: JSON.stringify(facts.outputs),
      upstream_cost_micros: facts.upstreamCostMicros ?? null,
      warnings_json: withWarnings(task, facts.warnings),
    };
  });
}

/**
 * queued/running -> failed: the hold is released. `message` is a model's reason (English) or a
 * detail; `warnings` are added to the task's (a result that did not match the request says so).
 */
export function failTask(
  ctx: Context,
  taskId: string,
  code: TaskErrorCode,
  message: string | null,
  warnings?: Warning[],
): Promise<boolean> {
  return resolveOnce(ctx, taskId, async (trx, task, now) => {
    await ctx.ledger.release(trx, taskId, now);
    return {
      state: 'failed',
      charged_credits: 0,
      error_code: code,
      error_message: message,
      warnings_json: withWarnings(task, warnings),
    };
  });
}

/** queued/running -> expired: the deadline passed; the hold is released; a later result is ignored. */
export function expireTask(ctx: Context, taskId: string): Promise<boolean> {
  return resolveOnce(ctx, taskId, async (trx, _task, now) => {
    await ctx.ledger.release(trx, taskId, now);
    return { state: 'expired', charged_credits: 0, error_code: 'deadline_exceeded', error_message: null };
  });
}

const REASON_SCAN_CHARS = 2048;

/** The first `max` characters, cut back to the last whitespace so that no id is cut in half and half kept. */
function boundedHead(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max);
  const cut = Math.max(head.lastIndexOf(' '), head.lastIndexOf('\n'), head.lastIndexOf('\t'));
  return cut > 0 ? head.slice(0, cut) : '';
}

/** Where an identifier was taken out: empty parentheses around it (and a label before it) go too. */
const GONE = '\u0000';

/**
 * Tokens: letters, digits, `-` and `_`, with dots inside (a version: `2.0`). The classes on either
 * side of each dot exclude it, so a match never backtracks.
 */
const TOKEN = /[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*/g;

/**
 * A token that is an identifier, not a word: a JWT (`eyJ…` with its dot-separated parts), or
 * letters and digits joined by `-` or `_` (`rep-internal-7781`). Numbers and ranges (`5-10`) have
 * no letters; words (`text-to-video`) no digits.
 */
function isIdentifier(token: string): boolean {
  if (token.startsWith('eyJ') && token.includes('.')) return true;
  return /[-_]/.test(token) && /[A-Za-z]/.test(token) && /[0-9]/.test(token);
}

/**
 * Strips what a provider's reason may carry beyond the reason itself: task, account and key ids,
 * request and trace ids, UUIDs, emails, long hex, URLs with credentials or queries, well-known
 * token shapes (the service's `sk-service-`, OpenAI's `sk-` and `sk-proj-`, Replicate's `r8_`,
 * JWTs), and any other identifier it cannot know by name: a token that mixes letters and digits
 * joined by `-` or `_`, unless it is a word of the model's own id (`modelId`: ids look like
 * `<vendor>/<family>-2.0-mini/<mode>`), and the upstream's own job id (`handle`).
 * Parentheses left with nothing but labels in them go too: `(prediction rep-internal-7781)`.
 * Only the head of the text is read: some of these patterns take time quadratic in the length of
 * a run they fail on, and a provider's text can be of any length (the answer keeps 500 characters).
 * (The operator's own upstream keys were redacted before: runtime/upstreams/secret-redactor.ts.)
 */
export function scrubReason(reason: string, known: { modelId?: string; handle?: string | null } = {}): string {
  const keep = new Set(known.modelId?.match(TOKEN) ?? []);
  const head = boundedHead(reason, REASON_SCAN_CHARS);
  // A handle shorter than 4 characters could be any word.
  return (
    (known.handle && known.handle.length >= 4 ? head.split(known.handle).join(GONE) : head)
      .replace(/\b(?:task|acct|key|req|dlv|a)_[A-Za-z0-9_-]{6,}\b/g, GONE)
      .replace(/\bsk-[A-Za-z0-9_-]+/g, GONE)
      .replace(/\br8_[A-Za-z0-9_-]+/g, GONE)
      .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, GONE)
      .replace(/[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g, GONE)
      .replace(/\b[0-9a-f]{16,}\b/gi, GONE)
      .replace(/https?:\/\/\S+/g, GONE)
      .replace(TOKEN, (token) => (isIdentifier(token) && !keep.has(token) ? GONE : token))
      .replace(/\((?:\s*(?:request|account|task|id|trace|user)\b[^)]*)\)/gi, '')
      // Parentheses holding only removed ids, each with at most a label: `(job …, account …)`.
      .replace(/\(\s*(?:[A-Za-z]+\s*)?\u0000(?:[\s,;:]+(?:[A-Za-z]+\s*)?\u0000)*[\s,;:]*\)/g, '')
      .replaceAll(GONE, '')
      .replace(/\s{2,}/g, ' ')
      .replace(/\s+([.,;:])/g, '$1')
      .trim()
      .slice(0, 500)
  );
}

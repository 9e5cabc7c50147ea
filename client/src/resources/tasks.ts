import type { components } from '../sdk-types.js';
import { parseRetryAfterMs, TimeoutError } from '../core/errors.js';
import { PageIterator, type Page } from '../core/pagination.js';
import { newIdempotencyKey, sleep, type Core, type RequestOptions } from '../core/request.js';
import type { CreateTaskParamsFor, ListTasksQuery, ModelId, PurgeResult, Quote, Task, TaskState } from '../types.js';

type Body = components['schemas']['CreateTaskRequest'];

export const TERMINAL_STATES: readonly TaskState[] = ['succeeded', 'failed', 'canceled', 'expired'];

export function isTerminal(state: TaskState): boolean {
  return TERMINAL_STATES.includes(state);
}

export interface CreateOptions extends RequestOptions {
  /**
   * Makes the call safe to repeat for 24 hours. When none is given the client generates one
   * (crypto.randomUUID) and sends the same key on every automatic retry of this call.
   */
  idempotencyKey?: string | undefined;
  /** Hold the call open up to this many seconds (1 to 60; `true` = 60) for a terminal state. */
  wait?: number | boolean | undefined;
  /** X-Service-Retention: shortens the retention of this task's content, in seconds. */
  retentionSeconds?: number | undefined;
}

export interface WaitOptions {
  /** Give up (TimeoutError) after this long; default 10 minutes. */
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** First polling interval when the server gives no Retry-After; default 500 ms, backing off to 10 s. */
  pollIntervalMs?: number | undefined;
}

/** The created task and how it was created. */
export interface Created {
  task: Task;
  /** The Idempotency-Key sent (given or generated): repeat the call with it to get the same task. */
  idempotencyKey: string;
  /** True when the server answered with an existing task for this key (Idempotent-Replayed). */
  replayed: boolean;
  /** The server's polling hint (Retry-After), in seconds, when the task is not finished. */
  retryAfterSeconds: number | null;
  requestId: string;
}

const MAX_POLL_MS = 10_000;
const DEFAULT_WAIT_TIMEOUT_MS = 10 * 60_000;
/**
 * How long after creating a task `waitFor` may use the server's long wait by replaying the
 * createTask call with its Idempotency-Key: far inside the server's 24-hour window, so that a replay
 * can only ever return the original task, never create a second one.
 */
const LONG_WAIT_WINDOW_MS = 60 * 60_000;
const REMEMBERED_TASKS = 256;

interface Remembered {
  params: unknown;
  idempotencyKey: string;
  at: number;
}

export class Tasks {
  /** Tasks this client created recently: their body and key, for the long wait of `waitFor`. */
  private readonly created = new Map<string, Remembered>();

  constructor(private readonly core: Core) {}

  private remember(taskId: string, params: unknown, idempotencyKey: string) {
    this.created.delete(taskId);
    this.created.set(taskId, { params, idempotencyKey, at: Date.now() });
    if (this.created.size > REMEMBERED_TASKS) this.created.delete(this.created.keys().next().value!);
  }

  /** Creates a task (POST /jobs/createTask). With `wait` the answer may already be terminal. */
  async create<M extends ModelId>(params: CreateTaskParamsFor<M>, options: CreateOptions = {}): Promise<Task> {
    return (await this.createDetailed(params, options)).task;
  }

  /** As `create`, with the Idempotency-Key used, the replay flag and the polling hint. */
  async createDetailed<M extends ModelId>(
    params: CreateTaskParamsFor<M>,
    options: CreateOptions = {},
  ): Promise<Created> {
    const idempotencyKey = options.idempotencyKey ?? newIdempotencyKey();
    const wait =
      options.wait === true
        ? 60
        : typeof options.wait === 'number' && options.wait > 0
          ? Math.min(60, Math.floor(options.wait))
          : undefined;
    const timeoutMs =
      options.timeoutMs ?? (wait !== undefined ? Math.max(this.core.timeoutMs, (wait + 30) * 1000) : undefined);
    const result = await this.core.call<Task>(
      (signal) =>
        this.core.api.POST('/api/v1/jobs/createTask', {
          params: {
            query: wait !== undefined ? { wait: String(wait) } : {},
            header: {
              'Idempotency-Key': idempotencyKey,
              ...(options.retentionSeconds !== undefined ? { 'X-Service-Retention': options.retentionSeconds } : {}),
            },
          },
          body: params as unknown as Body,
          signal,
        }),
      'safe',
      { ...options, timeoutMs },
    );
    const retryAfterMs = parseRetryAfterMs(result.response.headers.get('retry-after'));
    if (!isTerminal(result.data.state)) this.remember(result.data.taskId, params, idempotencyKey);
    return {
      task: result.data,
      idempotencyKey,
      replayed: result.response.headers.get('idempotent-replayed') === 'true',
      retryAfterSeconds: retryAfterMs === null ? null : retryAfterMs / 1000,
      requestId: result.requestId,
    };
  }

  /**
   * Creates a task and returns it terminal. Uses the server's long wait: createTask with `wait`,
   * then `waitFor`, which repeats the call with the same Idempotency-Key (a replay holds the call
   * open again and holds no funds twice) until the task is terminal or `timeoutMs` runs out
   * (TimeoutError).
   */
  async createAndWait<M extends ModelId>(
    params: CreateTaskParamsFor<M>,
    options: Omit<CreateOptions, 'wait'> & { timeoutMs?: number | undefined } = {},
  ): Promise<Task> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
    const started = Date.now();
    const created = await this.createDetailed(params, {
      ...options,
      wait: Math.max(1, Math.min(60, Math.floor(timeoutMs / 1000))),
      timeoutMs: undefined,
    });
    if (isTerminal(created.task.state)) return created.task;
    return this.waitFor(created.task.taskId, {
      timeoutMs: Math.max(0, timeoutMs - (Date.now() - started)),
      signal: options.signal,
    });
  }

  /** Reads a task (GET /jobs/recordInfo); any state. */
  async get(taskId: string, options: RequestOptions = {}): Promise<Task> {
    return (await this.getWithResponse(taskId, options)).data;
  }

  private getWithResponse(taskId: string, options: RequestOptions) {
    return this.core.call<Task>(
      (signal) => this.core.api.GET('/api/v1/jobs/recordInfo', { params: { query: { taskId } }, signal }),
      'safe',
      options,
    );
  }

  /**
   * Resolves when the task is terminal (succeeded, failed, canceled, expired: check `state`).
   * For a task this client created within the last hour it uses the server's long wait (the
   * createTask call replayed with its Idempotency-Key and `wait`, which returns the same task and
   * holds nothing twice). Otherwise it polls recordInfo, waiting as long as the server's Retry-After
   * says when it sends one, else backing off from `pollIntervalMs` to 10 s.
   */
  async waitFor(taskId: string, options: WaitOptions = {}): Promise<Task> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    const known = this.created.get(taskId);
    if (known && Date.now() - known.at < LONG_WAIT_WINDOW_MS) {
      for (;;) {
        const remainingS = Math.floor((deadline - Date.now()) / 1000);
        if (remainingS < 1) break;
        const replay = await this.createDetailed(known.params as CreateTaskParamsFor<ModelId>, {
          idempotencyKey: known.idempotencyKey,
          wait: Math.min(60, remainingS),
          signal: options.signal,
        });
        if (replay.task.taskId !== taskId) break; // never expected inside the window; fall back to reading the task
        if (isTerminal(replay.task.state)) {
          this.created.delete(taskId);
          return replay.task;
        }
      }
    }
    let delay = options.pollIntervalMs ?? 500;
    for (;;) {
      const { data: task, response } = await this.getWithResponse(taskId, { signal: options.signal });
      if (isTerminal(task.state)) {
        this.created.delete(taskId);
        return task;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new TimeoutError(`task ${taskId} still ${task.state} after ${timeoutMs} ms`);
      const hint = parseRetryAfterMs(response.headers.get('retry-after'));
      await sleep(Math.min(hint ?? delay, left), options.signal);
      delay = Math.min(MAX_POLL_MS, Math.round(delay * 1.5));
    }
  }

  /** The calling key's tasks, newest first: `for await (const page of client.tasks.list())`. */
  list(query: ListTasksQuery = {}, options: RequestOptions = {}): PageIterator<Task> {
    return new PageIterator<Task>(async (cursor) => {
      const result = await this.core.call<{ items: Task[]; nextCursor: string | null }>(
        (signal) =>
          this.core.api.GET('/api/v1/jobs', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } }, signal }),
        'safe',
        options,
      );
      return { ...result.data, requestId: result.requestId } satisfies Page<Task>;
    });
  }

  /** Prices a request without creating a task (POST /jobs/quote); valid for five minutes. */
  async quote<M extends ModelId>(params: CreateTaskParamsFor<M>, options: RequestOptions = {}): Promise<Quote> {
    const result = await this.core.call<Quote>(
      (signal) => this.core.api.POST('/api/v1/jobs/quote', { body: params as unknown as Body, signal }),
      'safe',
      options,
    );
    return result.data;
  }

  /** Retries a failed or expired task as a new task (POST /jobs/retry), with an Idempotency-Key. */
  async retry(taskId: string, options: Omit<CreateOptions, 'wait' | 'retentionSeconds'> = {}): Promise<Task> {
    const idempotencyKey = options.idempotencyKey ?? newIdempotencyKey();
    const result = await this.core.call<Task>(
      (signal) =>
        this.core.api.POST('/api/v1/jobs/retry', {
          params: { header: { 'Idempotency-Key': idempotencyKey } },
          body: { taskId },
          signal,
        }),
      'safe',
      options,
    );
    return result.data;
  }

  /** Destroys a finished task's content, keeping billing evidence (POST /jobs/purge); idempotent. */
  async purge(taskId: string, options: RequestOptions = {}): Promise<PurgeResult> {
    const result = await this.core.call<PurgeResult>(
      (signal) => this.core.api.POST('/api/v1/jobs/purge', { body: { taskId }, signal }),
      'safe',
      options,
    );
    return result.data;
  }
}

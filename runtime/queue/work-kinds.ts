/**
 * The one map of work kinds to what an item of each kind carries (as graphile-worker types its
 * tasks): a kind is a name checked against this interface wherever work is scheduled, handed over,
 * handled or given a lane, not a string repeated in the folders that use it. A new kind is a new
 * entry here; its handler is then missing from the service's handler map until one is written
 * (runtime/service.ts).
 */
export interface WorkPayloads {
  /** Start the task's job on a deployment (`refId`: the references were checked already). */
  run: { taskId: string; refId?: typeof REFERENCES_CHECKED };
  /** Check the task's external reference files before its run (the check lane). */
  check: { taskId: string };
  /** Poll the task's job; the upstream callback makes it due at once. */
  poll: { taskId: string };
  /** The task's deadline. */
  expire: { taskId: string };
  /** The task's retention ran out: its content goes. */
  purge: { taskId: string };
  /** Cancel the job of a task that ended while it ran upstream. */
  'upstream-cancel': { taskId: string };
  /** Slow polls of a job its ended task no longer waits for. */
  reconcile: { taskId: string };
  /** Looks for the job a submit whose outcome is unknown may have made (the reconciliation lane). */
  'find-job': { taskId: string };
  /** One attempt of one webhook delivery (`refId`: the delivery id; the delivery lane). */
  deliver: { taskId: string; refId: string };
  /** Recurring: Idempotency-Key rows past their window. */
  'expire-idempotency-keys': Record<never, never>;
  /** Recurring: upload tickets past their time. */
  'expire-uploads': Record<never, never>;
  /** Recurring: probes of unwell deployments, and evidence past its window swept (runtime/routing/probe-health.ts). */
  'watch-upstreams': Record<never, never>;
  /** Recurring: paid Checkout Sessions whose webhook never came, credited (runtime/payments/; idle while payments are off). */
  'reconcile-payments': Record<never, never>;
}

export type WorkKind = keyof WorkPayloads;

/** ref_id of a run item written by a passed check: its references were checked, the run starts the deployment. */
export const REFERENCES_CHECKED = 'references-checked';

/** A new item of kind K: the kind, when it is due, and that kind's payload. */
export type WorkOf<K extends WorkKind> = { kind: K; dueAt: number } & WorkPayloads[K];

/** A new item of any kind. */
export type NewWork = { [K in WorkKind]: WorkOf<K> }[WorkKind];

/** The columns a payload fills (every payload is of this shape: checked below). */
export interface WorkFields {
  taskId?: string | null;
  refId?: string | null;
}

/** A payload that is not WorkFields-shaped fails to compile here. */
export const PAYLOADS_ARE_WORK_FIELDS: { [K in WorkKind]: WorkPayloads[K] extends WorkFields ? true : never } = {
  run: true,
  check: true,
  poll: true,
  expire: true,
  purge: true,
  'upstream-cancel': true,
  reconcile: true,
  'find-job': true,
  deliver: true,
  'expire-idempotency-keys': true,
  'expire-uploads': true,
  'watch-upstreams': true,
  'reconcile-payments': true,
};

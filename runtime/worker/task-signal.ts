/**
 * What ends a task's downloads: the worker's item aborted (shutdown, lease taken over) or the
 * task's deadline, whichever comes first. A result still arriving at the deadline is cut there:
 * the task expires (its expire item), so nothing of it could be kept anyway.
 */
export interface TaskSignal {
  signal: AbortSignal;
  /** Whether it was the deadline that ended it. */
  readonly deadlinePassed: boolean;
  /** Drops the timer and the listener (the handler is done). */
  clear(): void;
}

export function taskSignal(item: AbortSignal | undefined, msToDeadline: number): TaskSignal {
  const controller = new AbortController();
  let deadlinePassed = false;
  const timer = setTimeout(
    () => {
      deadlinePassed = true;
      controller.abort(new Error('the task reached its deadline'));
    },
    Math.max(0, msToDeadline),
  );
  const follow = () => controller.abort(item?.reason);
  if (item?.aborted) follow();
  else item?.addEventListener('abort', follow, { once: true });
  return {
    signal: controller.signal,
    get deadlinePassed() {
      return deadlinePassed;
    },
    clear() {
      clearTimeout(timer);
      item?.removeEventListener('abort', follow);
    },
  };
}

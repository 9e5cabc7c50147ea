import { EventEmitter } from 'node:events';

/**
 * Wakes held `wait` requests when a task resolves. In one process the resolving code emits
 * directly; across processes a bridge (PostgreSQL LISTEN/NOTIFY) feeds `emitResolved`.
 */
export class TaskEvents {
  private readonly emitter = new EventEmitter();

  /** `publish` is called after a local resolution commits, to tell other processes (runtime/storage/notify.ts). */
  constructor(private readonly publish: (taskId: string) => void = () => {}) {
    this.emitter.setMaxListeners(0);
  }

  resolved(taskId: string): void {
    this.emitResolved(taskId);
    this.publish(taskId);
  }

  emitResolved(taskId: string): void {
    this.emitter.emit(taskId);
  }

  /** Resolves true when the task resolves, false when `ms` pass or the signal aborts first. */
  waitFor(taskId: string, ms: number, signal?: AbortSignal): { promise: Promise<boolean>; cancel: () => void } {
    let cancel = () => {};
    const promise = new Promise<boolean>((resolve) => {
      const done = (value: boolean) => {
        cancel();
        resolve(value);
      };
      const onEvent = () => done(true);
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), ms);
      this.emitter.once(taskId, onEvent);
      signal?.addEventListener('abort', onAbort, { once: true });
      cancel = () => {
        clearTimeout(timer);
        this.emitter.off(taskId, onEvent);
        signal?.removeEventListener('abort', onAbort);
      };
    });
    return { promise, cancel: () => cancel() };
  }
}

import type { Config } from '../config.js';
import type { WorkKind } from './work-kinds.js';

/**
 * A pool of the worker with its own slots, claimed on its own: the claim takes only the lane's
 * kinds, so a lane whose items are slow (receivers that hang, reference hosts that never answer)
 * can be full without holding back the claims of another lane.
 */
export interface Lane {
  name: string;
  /** The lane's kinds; with `others`, every kind no other lane names. */
  kinds: readonly WorkKind[] | 'others';
  concurrency: number;
}

/** The lanes of a worker: network-bound reference checks, webhook deliveries and reconciliations each apart from the task lane. */
export function workLanes(config: Config): Lane[] {
  return [
    { name: 'tasks', kinds: 'others', concurrency: config.workerConcurrency },
    { name: 'checks', kinds: ['check'], concurrency: config.workerCheckConcurrency },
    { name: 'deliveries', kinds: ['deliver'], concurrency: config.workerDeliveryConcurrency },
    // Slow polls of jobs no task waits for: an upstream that hangs on them must not hold back the polls of live tasks.
    {
      name: 'reconciliations',
      kinds: ['reconcile', 'find-job', 'reconcile-payments'],
      concurrency: config.workerReconcileConcurrency,
    },
  ];
}

/** Which kinds a lane's claim takes: these kinds, or every kind but these. */
export interface KindFilter {
  kinds: WorkKind[];
  except: boolean;
}

export function kindFilter(lane: Lane, lanes: readonly Lane[]): KindFilter {
  if (lane.kinds !== 'others') return { kinds: [...lane.kinds], except: false };
  return { kinds: lanes.flatMap((other) => (other.kinds === 'others' ? [] : other.kinds)), except: true };
}

import type { Config } from '../config.js';
import { DELIVER_WORK } from '../webhooks/enqueue.js';

/** The work kind that checks a task's external reference files before its run (runtime/worker/check-work.ts). */
export const CHECK_WORK = 'check';

/**
 * A pool of the worker with its own slots, claimed on its own: the claim takes only the lane's
 * kinds, so a lane whose items are slow (receivers that hang, reference hosts that never answer)
 * can be full without holding back the claims of another lane.
 */
export interface Lane {
  name: string;
  /** The lane's kinds; with `others`, every kind no other lane names. */
  kinds: readonly string[] | 'others';
  concurrency: number;
  /** Most items of one account leased at once in the lane (0: no cap). */
  accountCap: number;
}

/**
 * The lanes of a worker: network-bound reference checks and webhook deliveries each apart from the
 * task lane. A delivery slot holds a socket and a promise, not CPU, so the delivery lane is larger
 * (128) and one account may use a quarter of it (32): a task lane's cap of 8 made one account's
 * fan-out run 8 posts at a time and claim its items one or two at a time as each post ended (a
 * claim statement per 2.7 deliveries, the lane's largest SQL cost), while another account's
 * deliveries still find 96 slots when the first account's receivers hang.
 */
export function workLanes(config: Config): Lane[] {
  return [
    { name: 'tasks', kinds: 'others', concurrency: config.workerConcurrency, accountCap: config.workerAccountCap },
    {
      name: 'checks',
      kinds: [CHECK_WORK],
      concurrency: config.workerCheckConcurrency,
      accountCap: config.workerAccountCap,
    },
    {
      name: 'deliveries',
      kinds: [DELIVER_WORK],
      concurrency: config.workerDeliveryConcurrency,
      accountCap: config.workerDeliveryAccountCap,
    },
  ];
}

/** Which kinds a lane's claim takes: these kinds, or every kind but these. */
export interface KindFilter {
  kinds: string[];
  except: boolean;
}

export function kindFilter(lane: Lane, lanes: readonly Lane[]): KindFilter {
  if (lane.kinds !== 'others') return { kinds: [...lane.kinds], except: false };
  return { kinds: lanes.flatMap((other) => (other.kinds === 'others' ? [] : other.kinds)), except: true };
}

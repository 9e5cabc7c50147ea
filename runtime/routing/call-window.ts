/** Buckets a window is cut into: the share is exact to a thirtieth of the window. */
const BUCKETS = 30;

interface Bucket {
  /** Which slice of time (Math.floor(now / bucketMs)). */
  slice: number;
  calls: number;
  failures: number;
}

/**
 * The calls this process made to each deployment within the last window, and how many failed:
 * the failure share a cool-down for everyone needs (runtime/routing/evidence.ts). Each worker
 * process judges on its own calls, a sample of the deployment's traffic; nothing is written for
 * it, so a call the deployment answered costs no statement. Held in the service's context.
 */
export class CallWindow {
  private readonly byDeployment = new Map<string, Bucket[]>();

  constructor(private readonly windowMs: number) {}

  add(deployment: string, failed: boolean, now: number): void {
    const slice = Math.floor(now / this.bucketMs());
    const buckets = this.live(deployment, slice);
    let last = buckets[buckets.length - 1];
    if (last?.slice !== slice) {
      last = { slice, calls: 0, failures: 0 };
      buckets.push(last);
    }
    last.calls++;
    if (failed) last.failures++;
  }

  /** Calls and failures within the window as of now. */
  counts(deployment: string, now: number): { calls: number; failures: number } {
    const buckets = this.live(deployment, Math.floor(now / this.bucketMs()));
    let calls = 0;
    let failures = 0;
    for (const b of buckets) {
      calls += b.calls;
      failures += b.failures;
    }
    return { calls, failures };
  }

  private bucketMs(): number {
    return Math.max(1, Math.ceil(this.windowMs / BUCKETS));
  }

  /** The deployment's buckets, those older than the window dropped. */
  private live(deployment: string, slice: number): Bucket[] {
    let buckets = this.byDeployment.get(deployment);
    if (!buckets) {
      buckets = [];
      this.byDeployment.set(deployment, buckets);
    }
    while (buckets.length > 0 && buckets[0].slice <= slice - BUCKETS) buckets.shift();
    return buckets;
  }
}

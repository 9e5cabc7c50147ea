/** The earliest next poll of a running upstream job: sooner costs requests and learns nothing. */
const MIN_POLL_MS = 100;
/** The latest: the worker caps every wait at 30 s too. */
const MAX_POLL_MS = 30_000;

/** What an upstream said about a running job: its progress, how long it had run when that progress was recorded, and how long ago that was. */
export interface Progress {
  progress: number;
  elapsedMs: number;
  /** Time since the upstream recorded the progress (its `updatedAt`); 0 when it does not say. */
  ageMs?: number;
}

/**
 * When to ask an upstream again, from what it said: a job that reports progress is asked again
 * when, at the pace it has kept, it should be done (elapsed x (100 - progress) / progress after
 * the progress was recorded); without progress, after the upstream's own hint (Retry-After) or the
 * fallback. Always within 0.1 to 30 s, and never later than the hint when there is one.
 */
export function nextPollMs(report: Progress, hintMs: number | undefined, fallbackMs: number): number {
  const { progress, elapsedMs, ageMs = 0 } = report;
  const paced =
    progress > 0 && progress < 100 && elapsedMs > 0
      ? Math.ceil((elapsedMs * (100 - progress)) / progress) - ageMs
      : undefined;
  const wait = paced !== undefined ? Math.min(paced, hintMs ?? paced) : (hintMs ?? fallbackMs);
  return Math.max(MIN_POLL_MS, Math.min(MAX_POLL_MS, wait));
}

/**
 * The first look at a job just submitted: half of what the upstream hinted (or of the fallback),
 * whichever is sooner. A job that finishes early is found early; one that runs long reports
 * progress, which paces the polls after it.
 */
export function firstPollMs(hintMs: number | undefined, fallbackMs: number): number {
  return Math.max(MIN_POLL_MS, Math.ceil(Math.min(hintMs ?? fallbackMs, fallbackMs) / 2));
}

/**
 * Crash fault points, for tests only (test/reliability/crash.test.ts). A point names a moment
 * right after a durable step (or inside a transaction, to prove it rolls back). When the service's
 * configuration arms it (`Config.faultPoints`, from MEDIAFORGE_FAULT_POINTS), reaching it kills
 * this process with SIGKILL: nothing after it runs, no finally block, no rollback by the process,
 * no graceful shutdown, exactly as a power cut or an OOM kill would. Never set it outside tests.
 *
 * Each service has its own `FaultPoints` (on its Context): two services in one process count and
 * fire their points apart. Unarmed, a point costs one comparison.
 */
export class FaultPoints {
  private readonly left: Map<string, number> | undefined;

  /**
   * `armed`: point name -> the time it is reached that fires (1: the first). `onReached` is what
   * firing does: by default SIGKILL of this process (synchronous and uncatchable: the signal is
   * delivered before the call returns); an in-process test may record instead.
   */
  constructor(
    armed: Readonly<Record<string, number>> = {},
    private readonly onReached: (name: string) => void = killThisProcess,
  ) {
    const entries = Object.entries(armed);
    this.left = entries.length ? new Map(entries) : undefined;
  }

  /** Fires when this point is armed and reached for the armed time. */
  reach(name: string): void {
    if (this.left === undefined) return;
    const left = this.left.get(name);
    if (left === undefined) return;
    if (left > 1) {
      this.left.set(name, left - 1);
      return;
    }
    this.left.delete(name);
    this.onReached(name);
  }

  /** The armed points, for the warning `serve` logs at start. */
  armed(): string[] {
    return this.left ? [...this.left.keys()] : [];
  }
}

function killThisProcess(): void {
  process.kill(process.pid, 'SIGKILL');
}

/** `name1,name2@3` arms `name1` (first time reached) and `name2` (third time reached). */
export function parseFaultPoints(text: string | undefined): Record<string, number> {
  const points: Record<string, number> = {};
  for (const entry of (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, nth] = entry.split('@');
    points[name] = nth === undefined ? 1 : Math.max(1, Number.parseInt(nth, 10) || 1);
  }
  return points;
}

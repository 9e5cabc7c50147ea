/**
 * Crash fault points, for tests only (test/reliability/crash.test.ts). A point names a moment
 * right after a durable step (or inside a transaction, to prove it rolls back). When the
 * MEDIAFORGE_FAULT_POINTS environment variable names it, reaching it kills this process with
 * SIGKILL: nothing after it runs, no finally block, no rollback by the process, no graceful
 * shutdown, exactly as a power cut or an OOM kill would. Never set it outside tests.
 *
 * MEDIAFORGE_FAULT_POINTS=name1,name2@3 arms `name1` (first time reached) and `name2` (third
 * time reached). The variable is read once, when this module loads; unset, a point costs one
 * comparison.
 */
const armed: Map<string, number> | undefined = parse(process.env.MEDIAFORGE_FAULT_POINTS);

function parse(text: string | undefined): Map<string, number> | undefined {
  if (!text) return undefined;
  const points = new Map<string, number>();
  for (const entry of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [name, nth] = entry.split('@');
    points.set(name, nth === undefined ? 1 : Math.max(1, Number.parseInt(nth, 10) || 1));
  }
  return points;
}

/** Kills the process with SIGKILL when this point is armed and reached for the armed time. */
export function faultPoint(name: string): void {
  if (armed === undefined) return;
  const left = armed.get(name);
  if (left === undefined) return;
  if (left > 1) {
    armed.set(name, left - 1);
    return;
  }
  // Synchronous and uncatchable: the signal is delivered before this call returns.
  process.kill(process.pid, 'SIGKILL');
}

/** The armed points, for the warning `serve` logs at start. */
export function armedFaultPoints(): string[] {
  return armed ? [...armed.keys()] : [];
}

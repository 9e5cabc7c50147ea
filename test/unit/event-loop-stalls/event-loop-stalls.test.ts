import { describe, expect, it } from 'vitest';
import { type Stall, stallLine, watchEventLoop } from '../../support/event-loop-stalls.js';

/** Keeps this thread busy for `ms` without yielding to the event loop. */
function block(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

const turn = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('event-loop stalls (test/support/event-loop-stalls.ts)', () => {
  it('reports a stretch in which the loop did not turn, with its length', async () => {
    const seen: Stall[] = [];
    const stop = watchEventLoop((stall) => seen.push(stall), 150, 10);
    await turn(30);
    block(400);
    await turn(50);
    stop();
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(Math.max(...seen.map((s) => s.stalledMs))).toBeGreaterThanOrEqual(150);
  });

  it('reports the stall the stop ends (a file whose tests never yield, stopped by its afterAll)', async () => {
    const seen: Stall[] = [];
    const stop = watchEventLoop((stall) => seen.push(stall), 150, 10);
    await turn(30);
    const before = seen.length;
    block(400);
    stop();
    expect(seen.length).toBe(before + 1);
    expect(seen.at(-1)!.stalledMs).toBeGreaterThanOrEqual(150);
  });

  it('reports nothing once stopped', async () => {
    const seen: Stall[] = [];
    const stop = watchEventLoop((stall) => seen.push(stall), 150, 10);
    await turn(30);
    stop();
    // A loaded machine may have stalled the loop before the stop: only what came after counts.
    const before = seen.length;
    block(400);
    await turn(50);
    expect(seen.length).toBe(before);
  });

  it('names the process, the length and what was running', () => {
    const line = stallLine(
      'a vitest fork',
      { stalledMs: 61_234, at: Date.UTC(2026, 10, 29, 20, 0, 0) },
      'a.test.ts > b',
    );
    expect(line).toBe(
      `EVENT LOOP STALL: a vitest fork (pid ${process.pid}) did not turn for 61.2 s, until 2026-11-29T20:00:00.000Z, in a.test.ts > b\n`,
    );
  });
});

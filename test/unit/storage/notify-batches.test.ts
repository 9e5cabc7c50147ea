import { describe, expect, it } from 'vitest';
import { NotifyBatches, type Notice } from '../../../runtime/storage/notify-batches.js';

/**
 * A script of what happens, in order: `tell` a notice (by its payload, on channel `c`), or the
 * first statement still on its way answers (`answer`) or fails (`fail`); the script ends by
 * answering whatever is still on its way. Wanted: the statements sent, as the payloads each
 * carried, and the log of answers and of how each tell settled, in the order they happened.
 */
type Step = { tell: string } | 'answer' | 'fail';

async function play(steps: Step[]): Promise<{ sent: string[][]; log: string[] }> {
  const sent: string[][] = [];
  const onTheirWay: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  const batches = new NotifyBatches(
    (notices: Notice[]) =>
      new Promise<void>((resolve, reject) => {
        sent.push(notices.map((n) => n.payload));
        onTheirWay.push({ resolve, reject });
      }),
  );
  const log: string[] = [];
  const settled: Promise<void>[] = [];
  const flush = () => new Promise((resolve) => setImmediate(resolve));
  const answer = (step: 'answer' | 'fail') => {
    const statement = onTheirWay.shift();
    if (!statement) throw new Error('the script answers a statement that was never sent');
    log.push(step);
    if (step === 'answer') statement.resolve();
    else statement.reject(new Error('connection lost'));
  };
  for (const step of steps) {
    if (step === 'answer' || step === 'fail') answer(step);
    else {
      const payload = step.tell;
      settled.push(
        batches.tell('c', payload).then(
          () => void log.push(`${payload} told`),
          () => void log.push(`${payload} failed`),
        ),
      );
    }
    await flush();
  }
  while (onTheirWay.length > 0) {
    answer('answer');
    await flush();
  }
  await Promise.all(settled);
  return { sent, log };
}

describe('NotifyBatches: one statement on its way at a time, what is told meanwhile in the next', () => {
  it.each<[string, { given: Step[]; want: { sent: string[][]; log: string[] } }]>([
    [
      'a notice alone goes out at once, in a statement of its own',
      { given: [{ tell: 'a' }], want: { sent: [['a']], log: ['answer', 'a told'] } },
    ],
    [
      'notices told while a statement is on its way go out together in the next, after it answers',
      {
        given: [{ tell: 'a' }, { tell: 'b' }, { tell: 'c' }],
        want: { sent: [['a'], ['b', 'c']], log: ['answer', 'a told', 'answer', 'b told', 'c told'] },
      },
    ],
    [
      'a notice told after its batch left waits for the next statement, and settles with it',
      {
        given: [{ tell: 'a' }, { tell: 'b' }, 'answer', { tell: 'c' }],
        want: { sent: [['a'], ['b'], ['c']], log: ['answer', 'a told', 'answer', 'b told', 'answer', 'c told'] },
      },
    ],
    [
      'identical notices of one statement are sent once, and every tell of them settles',
      {
        given: [{ tell: 'a' }, { tell: 'b' }, { tell: 'b' }],
        want: { sent: [['a'], ['b']], log: ['answer', 'a told', 'answer', 'b told', 'b told'] },
      },
    ],
    [
      'a failed statement rejects its own tells; the notices told meanwhile still go out',
      {
        given: [{ tell: 'a' }, { tell: 'b' }, 'fail'],
        want: { sent: [['a'], ['b']], log: ['fail', 'a failed', 'answer', 'b told'] },
      },
    ],
    [
      'once everything is sent, a later notice starts a statement again',
      {
        given: [{ tell: 'a' }, 'answer', { tell: 'b' }],
        want: { sent: [['a'], ['b']], log: ['answer', 'a told', 'answer', 'b told'] },
      },
    ],
  ])('%s', async (_name, { given, want }) => {
    expect(await play(given)).toEqual(want);
  });
});

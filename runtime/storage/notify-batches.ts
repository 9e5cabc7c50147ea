/**
 * What one process tells the others (runtime/storage/notify.ts), sent one statement at a time:
 * notices told while a statement is on its way wait for the next one and go out together. A
 * notice is never lost or sent before it is told: one told while a statement is on its way is in
 * the statement sent after that one answers; each `tell` settles with the statement that carried
 * it (rejected when that statement failed). Identical notices of one statement are sent once
 * (PostgreSQL delivers one of identical notices of a transaction anyway).
 */
export interface Notice {
  channel: string;
  payload: string;
}

/** The notices waiting for the next statement (one of each) and the promise its callers hold. */
interface Batch {
  notices: Map<string, Notice>;
  told: Promise<void>;
  settle(error: unknown): void;
}

export class NotifyBatches {
  private next: Batch | undefined;
  private sending = false;

  constructor(private readonly send: (notices: Notice[]) => Promise<void>) {}

  tell(channel: string, payload: string): Promise<void> {
    this.next ??= newBatch();
    this.next.notices.set(`${channel}\n${payload}`, { channel, payload });
    const { told } = this.next;
    if (!this.sending) void this.drain();
    return told;
  }

  private async drain(): Promise<void> {
    this.sending = true;
    while (this.next) {
      const batch = this.next;
      this.next = undefined;
      let failure: unknown;
      try {
        await this.send([...batch.notices.values()]);
      } catch (error) {
        failure = error ?? new Error('NOTIFY failed');
      }
      batch.settle(failure);
    }
    this.sending = false;
  }
}

function newBatch(): Batch {
  let settle: Batch['settle'] = () => {};
  const told = new Promise<void>((resolve, reject) => {
    settle = (error) => (error === undefined ? resolve() : reject(error));
  });
  return { notices: new Map(), told, settle };
}

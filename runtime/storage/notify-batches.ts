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

export class NotifyBatches {
  private next: { notices: Notice[]; keys: Set<string>; settle: Array<(error?: unknown) => void> } | undefined;
  private sending = false;

  constructor(private readonly send: (notices: Notice[]) => Promise<void>) {}

  tell(channel: string, payload: string): Promise<void> {
    this.next ??= { notices: [], keys: new Set(), settle: [] };
    const batch = this.next;
    const key = `${channel}\n${payload}`;
    if (!batch.keys.has(key)) {
      batch.keys.add(key);
      batch.notices.push({ channel, payload });
    }
    const told = new Promise<void>((resolve, reject) =>
      batch.settle.push((error) => (error === undefined ? resolve() : reject(error))),
    );
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
        await this.send(batch.notices);
      } catch (error) {
        failure = error ?? new Error('NOTIFY failed');
      }
      for (const settle of batch.settle) settle(failure);
    }
    this.sending = false;
  }
}

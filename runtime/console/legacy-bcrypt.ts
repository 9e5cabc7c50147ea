import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * bcrypt comparisons for password hashes written before scrypt ($2a$/$2b$). bcryptjs is plain
 * JavaScript: even its async compare takes the event loop for its whole cost (about 70-120 ms at
 * cost 10), so it runs in one worker thread, started at the first legacy sign-in. Each user's
 * hash is replaced by scrypt at their next successful sign-in, so this path dies out.
 */
const BCRYPTJS = createRequire(import.meta.url).resolve('bcryptjs');
const SOURCE = `
const { parentPort } = require('node:worker_threads');
const bcrypt = require(${JSON.stringify(BCRYPTJS)});
parentPort.on('message', ({ id, password, hash }) => {
  let ok = false;
  try { ok = bcrypt.compareSync(password, hash); } catch { ok = false; }
  parentPort.postMessage({ id, ok });
});`;

export function isLegacyHash(stored: string): boolean {
  return /^\$2[aby]\$\d\d\$/.test(stored);
}

/** One worker thread, started at the first comparison; owned by the PasswordHasher that uses it. */
export class LegacyBcrypt {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (ok: boolean) => void; reject: (error: Error) => void }>();

  compare(password: string, hash: string): Promise<boolean> {
    this.worker ??= this.start();
    const id = this.nextId++;
    const promise = new Promise<boolean>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.worker.postMessage({ id, password, hash });
    return promise;
  }

  private start(): Worker {
    const started = new Worker(SOURCE, { eval: true });
    started.unref(); // never keeps the process alive
    started.on('message', ({ id, ok }: { id: number; ok: boolean }) => {
      this.pending.get(id)?.resolve(ok);
      this.pending.delete(id);
    });
    const fail = (error: Error) => {
      if (this.worker === started) this.worker = undefined;
      for (const entry of this.pending.values()) entry.reject(error);
      this.pending.clear();
    };
    started.on('error', fail);
    started.on('exit', (code) => fail(new Error(`bcrypt worker exited (${code})`)));
    return started;
  }
}

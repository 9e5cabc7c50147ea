import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { openDb, type Db } from './dialect.js';

/**
 * Opens the service's database. A SQLite file the service creates is readable by its owner only
 * (0600; SQLite gives its -wal and -shm files the same mode), in folders it creates 0700: it holds
 * webhook secrets and the link-signing secret. Existing files and folders keep the modes their
 * operator gave them. Apart from service.ts so that a console command (cli/command-db.ts) opens
 * the database without loading the whole service (its HTTP app, worker and adapters).
 */
export async function openServiceDb(dbUrl: string): Promise<Db> {
  if (dbUrl.startsWith('sqlite:') && !dbUrl.includes(':memory:')) {
    const path = resolve(dbUrl.slice('sqlite:'.length));
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  }
  return openDb(dbUrl);
}

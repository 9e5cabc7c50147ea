import { resolve } from 'node:path';

/**
 * The database a URL names, as an operator may be shown it: a SQLite file as its absolute path (so
 * a command run from another folder than the service's says so), a PostgreSQL URL with its password
 * removed (the rest, user, host, database and options, kept: they tell databases apart).
 */
export function databaseName(dbUrl: string): string {
  if (dbUrl.startsWith('sqlite:')) {
    const path = dbUrl.slice('sqlite:'.length);
    return path.includes(':memory:') ? dbUrl : resolve(path);
  }
  try {
    const url = new URL(dbUrl);
    url.password = '';
    return url.toString();
  } catch {
    // Not a URL the parser reads: drop whatever sits between the user's colon and the @.
    return dbUrl.replace(/^([^:/]+:\/\/[^:/@]*):[^@]*@/, '$1@');
  }
}

/**
 * `npm run test:statements`, after the tests: when MEDIAFORGE_STATEMENT_RECORD names the directory
 * a run recorded into (.ci/run sets it), read every process's record and exit 1 on what
 * test/support/statement-check.ts finds, each gap with the runtime file:line that issued it and the
 * projects it ran on and not (.ci/run fails on it: issue 38).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './root.js';
import { issuer, type Recorded, statementProblems } from './statement-check.js';

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    return statSync(join(ROOT, path)).isDirectory() ? sources(path) : [path];
  });
}

async function check(dir: string): Promise<void> {
  const records: Recorded[] = readdirSync(dir)
    .filter((name) => name.endsWith('.jsonl'))
    .flatMap((name) =>
      readFileSync(join(dir, name), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Recorded),
    );
  const { S3BlobStore } = await import('../../runtime/blobs/s3-blob-store.js');
  const s3Operations = new Set(
    Object.getOwnPropertyNames(S3BlobStore.prototype).filter((name) => name !== 'constructor'),
  );
  const problems = statementProblems({ records, sourceFiles: new Set(sources('runtime')), s3Operations });
  const distinct = (engine: string) =>
    new Set(
      records.flatMap((r) =>
        r.kind === 'sql' && r.engine === engine && issuer(r.files) !== undefined ? [r.statement] : [],
      ),
    ).size;
  const operations = (store: string) =>
    new Set(records.flatMap((r) => (r.kind === 'store' && r.store === store ? [r.operation] : []))).size;
  console.log(
    `statement record: ${distinct('sqlite')} distinct statements of the service on SQLite, ${distinct('postgres')} on PostgreSQL; ${operations('local')} store operations on the local store, ${operations('s3')} on S3 (${dir})`,
  );
  if (problems.length > 0) {
    console.error(`statement record: ${problems.length} problem(s):\n${problems.map((p) => `  ${p}`).join('\n')}`);
    process.exit(1);
  }
}

const dir = process.env.MEDIAFORGE_STATEMENT_RECORD;
if (dir) await check(dir);

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The bucket every s3rver started here holds (the suites' and the benchmarks'). */
export const S3RVER_BUCKET = 'mediaforge-test';

export interface S3rverProcess {
  /** http://127.0.0.1:PORT */
  endpoint: string;
  close(): Promise<void>;
}

/**
 * s3rver (an S3-compatible server on npm) on 127.0.0.1, a free port and a temporary directory, with
 * its keys S3RVER/S3RVER and one bucket. It does not decode aws-chunked bodies: a store on it runs
 * with `when_required` checksums, as the docs say for such servers.
 */
export async function startS3rver(): Promise<S3rverProcess> {
  // Loaded here, not on import: every suite that starts a service imports this module's neighbours,
  // and only the s3 projects' global setup and a few suites start s3rver (koa and its tree).
  const { default: S3rver } = await import('s3rver');
  const directory = mkdtempSync(join(tmpdir(), 'mediaforge-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory,
    silent: true,
    configureBuckets: [{ name: S3RVER_BUCKET }],
  });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

import type { TestProject } from 'vitest/node';
import { startTestS3Server } from './s3-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The S3 server of the `s3` projects (vitest.config.ts): startTestService puts media there. */
    s3Endpoint: string;
  }
}

/** One s3rver for a whole `s3` project run, started and stopped by vitest; each service gets its own prefix in its bucket. */
export default async function setup(project: TestProject) {
  const s3 = await startTestS3Server();
  project.provide('s3Endpoint', s3.endpoint);
  return () => s3.close();
}

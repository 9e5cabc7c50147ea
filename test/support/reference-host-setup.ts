import type { TestProject } from 'vitest/node';
import { ReferenceHost } from '../../support/media/reference-host.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The origin of the run's shared reference host (test/support/reference-url.ts). */
    referenceHost: string;
  }
}

/**
 * One loopback reference host for a whole project run (vitest.config.ts): the customer's files a
 * suite names (`referenceUrl('/a.png')`) are real media on loopback, so a service that fetches
 * its references whole (issue 37 point 3: every upstream deployment) measures real bytes and no
 * fetch ever leaves the machine. Suites that swap or count what a path serves start their own.
 */
export default async function setup(project: TestProject) {
  const host = await new ReferenceHost({ anyPath: true }).start();
  project.provide('referenceHost', host.url);
  return () => host.close();
}

import { defineConfig } from 'vitest/config';

/**
 * `npm run test:long`: the long runs of the reliability suite (test/**\/*.long.test.ts), excluded
 * from `npm test` by vitest.config.ts. MEDIAFORGE_LONG_MINUTES sets the length of the load run
 * (default 10); the test's own timeout follows it.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.long.test.ts'],
    pool: 'forks',
    hookTimeout: 180_000,
    testTimeout: 60 * 60_000,
  },
});

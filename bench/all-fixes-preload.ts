/**
 * Diagnosis only: the two proposed runtime changes together (prepared-statement cache, worker
 * batching), to measure their combined effect side by side with bench/ab.ts.
 */
import './stmt-cache-preload.js';
import './worker-batch-preload.js';

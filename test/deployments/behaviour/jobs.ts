import { JobsProtocolServer } from '../../../support/upstreams/jobs-protocol-server.js';
import { type BehaviourAdapter, loopback, type SubmitFault, serverFaults } from './adapter.js';

/** The envelope's answer to a submit instead of a task (the specification's error codes: 429, 401, 422). */
const ANSWERS: Record<SubmitFault, { status: number; retryAfter?: string; msg: string }> = {
  busy: { status: 429, msg: 'Too many requests.' },
  'busy-retry-after': { status: 429, retryAfter: '20', msg: 'Too many requests.' },
  unauthorized: { status: 401, msg: 'Missing or invalid API key.' },
  refused: { status: 422, msg: 'The prompt was rejected by the content policy.' },
};

/** jobs (runtime/upstreams/jobs.ts): the createTask / recordInfo protocol of the specification. */
export const adapter: BehaviourAdapter = {
  kind: 'jobs',
  model: 'vendor_a/family_a-2.0-fast/text-to-video',
  upstreamModel: 'vendor_a/family_a-2.0-fast/text-to-video',
  async start(faults) {
    const server = await new JobsProtocolServer(serverFaults(faults, (fault) => ANSWERS[fault])).start();
    return loopback(server.baseUrl, server, {
      submits: () => server.submits.map((s) => s.body),
      jobs: () => [...server.jobs.values()],
    });
  },
  failReason: 'Content policy violation: the prompt was rejected',
  refusalReason: 'The prompt was rejected by the content policy.',
  cancel: 'none',
  unsupported: {
    'deadline with a cancel': 'the jobs protocol has no cancel: an accepted task cannot be stopped',
    'provider cancel': 'an accepted task cannot be stopped (the specification: `canceled` exists for old records only)',
  },
};

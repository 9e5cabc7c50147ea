import { MinimaxServer, minimaxRefusal } from '../../../support/upstreams/vendors/minimax-server.js';
import type { Special } from '../../../support/upstreams/loopback-upstream.js';
import { type BehaviourAdapter, loopback, type SubmitFault, serverFaults } from './adapter.js';

/** minimax (spec/providers/minimax.yaml): failures are 200 answers with base_resp; MiniMax has no cancel. */
const ANSWERS: Record<SubmitFault, Special> = {
  busy: minimaxRefusal(1002, 'rate limit exceeded(RPM)'),
  'busy-retry-after': {
    status: 429,
    body: { base_resp: { status_code: 1002, status_msg: 'rate limit exceeded(RPM)' } },
    retryAfter: '20',
  },
  unauthorized: minimaxRefusal(1004, 'not authorized'),
  refused: minimaxRefusal(1026, 'input new_sensitive'),
};

export const adapter: BehaviourAdapter = {
  kind: 'minimax',
  model: 'vendor_d/family_d/text-to-video',
  upstreamModel: 'MiniMax-Hailuo-02',
  input: { duration_seconds: 6 },
  async start(faults) {
    const server = await new MinimaxServer(serverFaults(faults, (fault) => ANSWERS[fault])).start();
    return loopback(server.url, server, {
      submits: () => server.submits.map((s) => s.body),
      jobs: () => [...server.tasks.values()],
      // MiniMax has no cancel path: whatever the service would ask lands among the strays.
      cancels: () => server.strays,
      refusedCancels: () => server.strays,
    });
  },
  failReason: 'output video sensitive',
  refusalReason: 'input new_sensitive',
  cancel: 'none',
  unsupported: {
    'deadline with a cancel': 'MiniMax has no cancel: a task runs to its end',
    'provider cancel': 'MiniMax publishes no cancelled state: a task ends Success or Fail',
  },
};

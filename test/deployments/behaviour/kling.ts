import { KlingServer } from '../../../support/upstreams/vendors/kling-server.js';
import type { SubmitOverride } from '../../../support/upstreams/vendors/vendor-server.js';
import { type BehaviourAdapter, loopback, type SubmitFault, serverFaults } from './adapter.js';

/** kling (spec/providers/kling.yaml): a JWT signed with ACCESS:SECRET; Kling's envelopes; no cancel. */
const ACCESS = 'AK-operator';

export const adapter: BehaviourAdapter = {
  kind: 'kling',
  model: 'vendor_b/family_c-3.0/text-to-video',
  upstreamModel: 'kling-v2-1',
  secret: (key) => `${ACCESS}:${key}`,
  async start(faults) {
    const answers = (fault: SubmitFault): SubmitOverride => {
      if (fault === 'busy') return server.envelope('concurrency');
      if (fault === 'busy-retry-after') return { ...server.envelope('rateLimit'), retryAfter: '20' };
      if (fault === 'unauthorized') return server.envelope('unauthorized');
      return server.envelope('contentSecurity');
    };
    // Kling's key is the JWT's signing secret, not a Bearer key.
    const { submit, failWhenPromptContains, clockFor } = serverFaults(faults, answers);
    const server: KlingServer = await new KlingServer({
      accessKey: ACCESS,
      secretKey: faults.key,
      submit,
      failWhenPromptContains,
      clockFor,
    }).start();
    return loopback(server.baseUrl, server, {
      submits: () => server.submits.map((s) => s.body),
      jobs: () => [...server.jobs.values()],
      cancels: () => server.cancels,
      refusedCancels: () => server.cancels,
    });
  },
  failReason: 'Failure to pass the risk control system',
  refusalReason: 'content security policy',
  cancel: 'none',
  unsupported: {
    'deadline with a cancel': 'Kling has no cancel: a task runs to its end',
    'provider cancel': 'Kling publishes no cancelled state: a task ends succeed or failed',
  },
};

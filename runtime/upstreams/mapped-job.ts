import { providerMapping } from '../../generated/provider-mappings.js';
import type { DeploymentJob } from '../deployments/deployment.js';
import { mapInput } from './map-input.js';
import { UpstreamError } from '../deployments/upstream-error.js';

/**
 * A job's input as one protocol names it (spec/providers/<protocol>.yaml). An input the protocol
 * cannot take (a value or field it has no counterpart for) is refused as the provider would
 * refuse it: the router does not send such inputs here, so this only meets a task queued before
 * the deployments file (or the mapping) changed.
 */
export function mappedJob(protocol: string, job: DeploymentJob): Record<string, unknown> {
  const mapping = providerMapping(protocol, job.model.id);
  if (!mapping) throw new UpstreamError('rejected', `${protocol}: the model ${job.model.id} cannot be sent`);
  const mapped = mapInput(mapping, job.portableInput ?? job.input);
  if (!mapped.ok)
    throw new UpstreamError('rejected', `${protocol}: the input cannot be sent`, {
      reason: `The provider does not take ${mapped.field} ${JSON.stringify(mapped.value)}.`,
    });
  return mapped.body;
}

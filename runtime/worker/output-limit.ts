import type { ModelInfo } from '../../generated/catalogue.js';
import type { DeploymentOutput } from '../deployments/deployment.js';

/**
 * The outputs of a finished job the service stores: at most what the model can return, one video
 * and, where the request asked for it (`return_last_frame` on a model whose catalogue entry has
 * a `lastFrame`), one image. An upstream answering more (300 links) has the rest ignored: their
 * streams open only when read, so they are never fetched. The video is the first output declared
 * a video (the first output when none is), the frame the first other one declared an image; what
 * each really is, the stored bytes' probe says.
 */
export function outputsToStore(
  model: ModelInfo,
  input: Record<string, unknown>,
  outputs: DeploymentOutput[],
): DeploymentOutput[] {
  const video = outputs.find((output) => output.mime.startsWith('video/')) ?? outputs[0];
  const wantsFrame = model.output.lastFrame !== null && input.return_last_frame === true;
  const frame = wantsFrame ? outputs.find((output) => output !== video && output.mime.startsWith('image/')) : undefined;
  // In the upstream's order, as the task lists them.
  return outputs.filter((output) => output === video || output === frame);
}

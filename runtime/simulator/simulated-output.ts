import type { ModelInfo } from '../../generated/catalogue.js';
import type { DeploymentOutput } from '../deployments/deployment.js';
import type { RenderCache } from './render-cache.js';

/**
 * The frame the simulator draws: the model's size table at the asked aspect_ratio and resolution;
 * where the shape follows the references (no aspect_ratio, or a value such as adaptive with no
 * row in the table), the catalogue's stand-in size for the resolution.
 */
export function simulatedFrame(model: ModelInfo, input: Record<string, unknown>): { width: number; height: number } {
  const standIns = model.output.simulator.sizesFollowingReferences;
  const resolution =
    typeof input.resolution === 'string' && input.resolution in standIns ? input.resolution : Object.keys(standIns)[0];
  const ratio = typeof input.aspect_ratio === 'string' ? input.aspect_ratio : undefined;
  const size = (ratio !== undefined ? model.outputSizes?.[ratio]?.[resolution] : undefined) ?? standIns[resolution];
  const [width, height] = size.split('x').map(Number);
  return { width, height };
}

/**
 * What the simulator returns for a task lasting `seconds`: a playable video of colour bars at the
 * model's frame size and rate, in the container `output_format` asks for (the model's default
 * container otherwise), with silent sound unless `generate_audio` is false; then, when
 * `return_last_frame` is true on a model that has it, the last frame as an image of the same size.
 * Files are rendered once per shape (see RenderCache); one too large to keep is streamed.
 */
export function simulatedOutputs(
  rendered: RenderCache,
  model: ModelInfo,
  input: Record<string, unknown>,
  seconds: number,
): DeploymentOutput[] {
  const { output } = model;
  const container =
    (typeof input.output_format === 'string' ? output.containers[input.output_format] : undefined) ??
    output.containers[output.defaultContainer];
  const { width, height } = simulatedFrame(model, input);
  const video = rendered.video({
    width,
    height,
    frameRate: output.frameRate,
    seconds,
    brands: container.brands,
    audio: input.generate_audio !== false,
  });
  const outputs: DeploymentOutput[] = [
    { ...video, mime: container.mime, extension: container.extension, durationSeconds: seconds },
  ];
  if (input.return_last_frame === true && output.lastFrame)
    outputs.push({
      ...rendered.png(width, height),
      mime: output.lastFrame.mime,
      extension: output.lastFrame.extension,
    });
  return outputs;
}

import type { ModelInfo } from '../../generated/catalogue.js';
import type { Warning } from '../../generated/support.js';
import type { Probed } from '../files/probe.js';

/**
 * Tolerances of the check of a result against its request (docs/deployments.md, "Results are
 * checked against the request"). Encoders round a frame to a multiple of 8 or 16 pixels (1080 is
 * written 1088) and a clip's last frame may end a little before the asked second.
 */
export const FRAME_TOLERANCE = 0.02;
export const LENGTH_TOLERANCE_SECONDS = 0.5;
export const LENGTH_TOLERANCE_SHARE = 0.05;

/**
 * What settlement does with a stored result, given what was asked:
 * - `as-asked`: it matches (within the tolerances), settled as today;
 * - `shorter`: only its length falls short: the catalogue prices by the second, so the task is
 *   settled at the measured length (never at the asked or the provider's reported length);
 * - `mismatch`: a frame or a container other than the one asked for: the catalogue cannot price
 *   what was delivered as if it were the asked option, so the task fails as a provider error
 *   (hold released; the job's upstream cost is still recorded).
 * Each outcome other than `as-asked` carries the warning the task keeps.
 */
export type ResultVerdict =
  | { kind: 'as-asked' }
  | { kind: 'shorter'; seconds: number; warning: Warning }
  | { kind: 'mismatch'; detail: string; warning: Warning };

/** The frame the request asks for: the model's size table at its aspect ratio, else the resolution's stand-in size. */
function askedFrame(
  model: ModelInfo,
  input: Record<string, unknown>,
): { width: number; height: number; exact: boolean } | undefined {
  const standIns = model.output.simulator.sizesFollowingReferences;
  const fallback = model.inputSchema.properties.resolution?.default;
  const resolution = typeof input.resolution === 'string' ? input.resolution : fallback;
  if (typeof resolution !== 'string') return undefined;
  const ratio = typeof input.aspect_ratio === 'string' ? input.aspect_ratio : undefined;
  const fromTable = ratio !== undefined ? model.outputSizes?.[ratio]?.[resolution] : undefined;
  const size = fromTable ?? standIns[resolution];
  if (!size) return undefined;
  const [width, height] = size.split('x').map(Number);
  return width > 0 && height > 0 ? { width, height, exact: fromTable !== undefined } : undefined;
}

const near = (delivered: number, asked: number) => Math.abs(delivered - asked) <= asked * FRAME_TOLERANCE;

/**
 * Whether the delivered frame is the asked one: both sides where the size table names the frame
 * (orientation included), else the short side only (the shape follows the references).
 */
function frameMatches(asked: { width: number; height: number; exact: boolean }, video: Probed): boolean {
  const { width, height } = video;
  if (!width || !height) return true; // a size the probe cannot read is not judged
  if (asked.exact) return near(width, asked.width) && near(height, asked.height);
  return near(Math.min(width, height), Math.min(asked.width, asked.height));
}

function mismatch(asked: string, delivered: string): ResultVerdict {
  return {
    kind: 'mismatch',
    detail: `The provider's result (${delivered}) does not match the request (${asked}).`,
    warning: {
      code: 'result_not_as_requested',
      path: 'output',
      message: { key: 'result_not_as_requested', params: { asked, delivered } },
    },
  };
}

/**
 * The stored result's first video, as probed from its bytes, against the request's frame
 * (resolution, aspect ratio), container (output_format, else the model's default) and length
 * (duration_seconds; a model that chooses the length, -1, is not judged on it). Only a shortfall
 * beyond the tolerance counts: a longer clip is charged at most the hold, and a joined output (a
 * video extended) is longer by design. A result the service did not probe (the built-in
 * simulator declares its own) is not judged.
 */
export function resultAgainstRequest(
  model: ModelInfo,
  input: Record<string, unknown>,
  video: Probed | undefined,
): ResultVerdict {
  if (!video) return { kind: 'as-asked' };
  const { output } = model;
  const container =
    (typeof input.output_format === 'string' ? output.containers[input.output_format] : undefined) ??
    output.containers[output.defaultContainer];
  if (container && video.mime !== container.mime) return mismatch(container.label, video.format.toUpperCase());
  const frame = askedFrame(model, input);
  if (frame && !frameMatches(frame, video))
    return mismatch(`${frame.width}x${frame.height}`, `${video.width}x${video.height}`);
  const asked = input.duration_seconds;
  const delivered = video.durationSeconds;
  if (typeof asked === 'number' && asked > 0 && typeof delivered === 'number') {
    const tolerance = Math.max(LENGTH_TOLERANCE_SECONDS, asked * LENGTH_TOLERANCE_SHARE);
    if (delivered < asked - tolerance) {
      const shown = String(Math.round(delivered * 100) / 100);
      return {
        kind: 'shorter',
        seconds: delivered,
        warning: {
          code: 'result_settled_as_delivered',
          path: 'output',
          message: { key: 'result_settled_as_delivered', params: { asked, delivered: shown } },
        },
      };
    }
  }
  return { kind: 'as-asked' };
}

import type { FieldIssue } from '../../generated/support.js';
import { fieldIssue } from '../errors.js';

/**
 * The reference limits of a model (`info.referenceLimits`, written in the model YAML) applied to
 * what is known of each reference file. Generic: the keys are those of spec/model.schema.json
 * (formats, opaque, sidePx, shortSidePx, maxBytes, clipSeconds, totalSeconds, minFps per kind,
 * and videoSecondsPlusDuration); no model is named here.
 */

/** One reference with what is known of its file (stored asset metadata, or a probe of fetched bytes). */
export interface KnownReference {
  path: string;
  field: string;
  /** The kind the field carries (image, video, audio, ...), or undefined for fields without one. */
  kind?: string;
  /** The kind of the file itself. */
  fileKind: string;
  format: string;
  bytes: number;
  width?: number | null;
  height?: number | null;
  hasAlpha?: boolean | null;
  durationSeconds?: number | null;
  fps?: number | null;
}

type Range = { min?: number; max?: number };
type KindLimits = {
  formats?: string[];
  opaque?: boolean;
  sidePx?: Range;
  shortSidePx?: Range;
  maxBytes?: number;
  clipSeconds?: Range;
  totalSeconds?: Range;
  minFps?: number;
  checked: string;
};

/**
 * acceptance: the limits marked `checked: acceptance` (the default of every model), judged on what
 * is known when the task is accepted; generation: every limit, on everything fetched by then
 * (`generation-published` limits, and external files, were not checked before).
 */
export type Phase = 'acceptance' | 'generation';

const applies = (checked: unknown, phase: Phase) => phase === 'generation' || checked === 'acceptance';
const round = (value: number) => Math.round(value * 100) / 100;
const outside = (value: number, range: Range) =>
  (range.min !== undefined && value < range.min) || (range.max !== undefined && value > range.max);

/** A kind's limits when the model has any (so an external file of that kind is worth fetching during generation). */
export function limitsFor(
  limits: Record<string, Record<string, unknown>>,
  kind: string | undefined,
): KindLimits | undefined {
  const entry = kind ? (limits[kind] as KindLimits | undefined) : undefined;
  return entry && Object.keys(entry).some((key) => key !== 'checked') ? entry : undefined;
}

/**
 * Every problem of the references, each at its field path with its rule (the limit's key) and
 * the asset_* message. `complete`: every reference of the request is in `refs` (totals are only
 * judged in full then;
 * before, only a maximum the known lengths already exceed). `durationSeconds`: the request's own length, for videoSecondsPlusDuration.
 */
export function limitIssues(
  limits: Record<string, Record<string, unknown>>,
  refs: KnownReference[],
  phase: Phase,
  complete: boolean,
  durationSeconds: unknown,
): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const ref of refs) {
    const limit = ref.kind ? (limits[ref.kind] as KindLimits | undefined) : undefined;
    if (ref.kind && ref.fileKind !== ref.kind) {
      issues.push(
        fieldIssue(ref.path, 'kind', 'asset_format', {
          format: `${ref.format} (${ref.fileKind})`,
          allowed: limit?.formats?.join(', ') ?? `${ref.kind} files`,
        }),
      );
      continue;
    }
    if (!limit || !applies(limit.checked, phase)) continue;
    if (limit.formats && !limit.formats.includes(ref.format))
      issues.push(
        fieldIssue(ref.path, 'formats', 'asset_format', { format: ref.format, allowed: limit.formats.join(', ') }),
      );
    if (limit.opaque && ref.hasAlpha) issues.push(fieldIssue(ref.path, 'opaque', 'asset_transparency'));
    const { width, height } = ref;
    if (limit.sidePx && width && height && (outside(width, limit.sidePx) || outside(height, limit.sidePx))) {
      issues.push(
        fieldIssue(ref.path, 'sidePx', 'asset_side_px', {
          width,
          height,
          min: limit.sidePx.min ?? 1,
          max: limit.sidePx.max ?? 'any',
        }),
      );
    }
    if (limit.shortSidePx && width && height && outside(Math.min(width, height), limit.shortSidePx)) {
      issues.push(
        fieldIssue(ref.path, 'shortSidePx', 'asset_short_side_px', { width, height, min: limit.shortSidePx.min ?? 1 }),
      );
    }
    if (limit.maxBytes !== undefined && ref.bytes > limit.maxBytes)
      issues.push(fieldIssue(ref.path, 'maxBytes', 'asset_bytes', { bytes: ref.bytes, max: limit.maxBytes }));
    if (
      limit.clipSeconds &&
      typeof ref.durationSeconds === 'number' &&
      outside(ref.durationSeconds, limit.clipSeconds)
    ) {
      issues.push(
        fieldIssue(ref.path, 'clipSeconds', 'asset_seconds', {
          seconds: round(ref.durationSeconds),
          min: limit.clipSeconds.min ?? 0,
          max: limit.clipSeconds.max ?? 'any',
        }),
      );
    }
    if (limit.minFps !== undefined && typeof ref.fps === 'number' && ref.fps < limit.minFps)
      issues.push(fieldIssue(ref.path, 'minFps', 'asset_fps', { fps: round(ref.fps), min: limit.minFps }));
  }
  // Totals: a length not known yet (an external clip before it is fetched) can only add to a sum, so
  // the known lengths alone already exceeding a maximum is a refusal now; a minimum of a total, and
  // everything else, waits until every reference is known (`complete`).
  const byKind = new Map<string, KnownReference[]>();
  for (const ref of refs)
    if (ref.kind && ref.fileKind === ref.kind) byKind.set(ref.kind, [...(byKind.get(ref.kind) ?? []), ref]);
  const knownSeconds = (group: KnownReference[]) =>
    group.reduce((sum, r) => sum + (typeof r.durationSeconds === 'number' ? r.durationSeconds : 0), 0);
  const allKnown = (group: KnownReference[]) => complete && group.every((r) => typeof r.durationSeconds === 'number');
  for (const [kind, group] of byKind) {
    const limit = limits[kind] as KindLimits | undefined;
    if (!limit?.totalSeconds || !applies(limit.checked, phase)) continue;
    const total = knownSeconds(group);
    const broken = allKnown(group)
      ? outside(total, limit.totalSeconds)
      : limit.totalSeconds.max !== undefined && total > limit.totalSeconds.max;
    if (broken) {
      issues.push(
        fieldIssue(`input.${group[0].field}`, 'totalSeconds', 'asset_total_seconds', {
          seconds: round(total),
          max: limit.totalSeconds.max ?? 'any',
        }),
      );
    }
  }
  const plus = limits.videoSecondsPlusDuration as { max: number; checked: string } | undefined;
  const videos = byKind.get('video') ?? [];
  if (
    plus &&
    applies(plus.checked, phase) &&
    videos.length &&
    typeof durationSeconds === 'number' &&
    durationSeconds > 0
  ) {
    const total = knownSeconds(videos);
    if (total + durationSeconds > plus.max) {
      issues.push(
        fieldIssue(`input.${videos[0].field}`, 'videoSecondsPlusDuration', 'asset_total_seconds', {
          seconds: round(total),
          max: Math.max(0, plus.max - durationSeconds),
        }),
      );
    }
  }
  return issues;
}

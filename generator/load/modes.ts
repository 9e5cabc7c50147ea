import type { ModeSpec, ModelField, SourceClip } from './types.js';

type Report = (path: (string | number)[], message: string) => void;

/** The format of a field that holds a clip to work on (a task id, a video URL or an asset). */
export const SOURCE_VIDEO_FORMAT = 'source-video';

/**
 * The mode's contract (spec/shared/modes.yaml): the fields every model of the mode has, required,
 * those none has, and what its pricing.sourceClip says.
 */
export function checkModeContract(
  mode: string,
  spec: ModeSpec | undefined,
  fields: Map<string, ModelField>,
  clip: SourceClip | undefined,
  at: Report,
): void {
  if (!spec) {
    at(['id'], `mode "${mode}" has no entry in spec/shared/modes.yaml`);
    return;
  }
  for (const name of spec.fields?.required ?? []) {
    const field = fields.get(name);
    if (!field) at(['fields'], `a ${mode} model needs the field "${name}" (spec/shared/modes.yaml)`);
    else if (!field.required)
      at(['fields', name], `${name} must be required on a ${mode} model (spec/shared/modes.yaml)`);
  }
  for (const name of spec.fields?.absent ?? []) {
    if (fields.has(name))
      at(['fields', name], `a ${mode} model has no "${name}" field (spec/shared/modes.yaml); remove it with null`);
  }
  for (const [key, want] of Object.entries(spec.sourceClip ?? {})) {
    const have = clip?.[key as keyof SourceClip];
    if (have !== want)
      at(
        ['pricing', 'sourceClip'],
        `a ${mode} model declares pricing.sourceClip.${key}: ${String(want)} (spec/shared/modes.yaml); this one has ${String(have)}`,
      );
  }
}

/**
 * A model with a source-video field says how its output and billable seconds follow from the clip
 * (`pricing.sourceClip`), and that block names such a field and fits the model's duration field.
 */
export function checkSourceClip(clip: SourceClip | undefined, fields: Map<string, ModelField>, at: Report): void {
  const sourceFields = [...fields.values()].filter((f) => f.format === SOURCE_VIDEO_FORMAT).map((f) => f.name);
  if (!clip) {
    if (sourceFields.length)
      at(
        ['fields', sourceFields[0]],
        `${sourceFields[0]} holds a source clip: the model needs pricing.sourceClip (how the output and the billable seconds follow from it)`,
      );
    return;
  }
  const path = ['pricing', 'sourceClip'];
  if (!sourceFields.includes(clip.field))
    at([...path, 'field'], `sourceClip.field must name a field of this model with format ${SOURCE_VIDEO_FORMAT}`);
  for (const other of sourceFields.filter((f) => f !== clip.field))
    at(['fields', other], `only one source-clip field per model: ${other} is not sourceClip.field`);
  const duration = fields.has('duration_seconds');
  if (clip.output === 'joined') {
    if (!duration) at([...path, 'output'], 'output joined needs duration_seconds (the length of the new segment)');
    if (clip.billSourceSeconds === undefined)
      at(
        [...path],
        "output joined needs billSourceSeconds: whether the clip's own seconds are billed besides the new segment",
      );
  } else {
    if (duration)
      at(
        ['fields', 'duration_seconds'],
        'output clip-length runs as long as the clip: the model has no duration_seconds',
      );
    if (clip.billSourceSeconds !== undefined)
      at(
        [...path, 'billSourceSeconds'],
        "billSourceSeconds applies to output joined only (clip-length bills the output, which is the clip's length)",
      );
  }
}

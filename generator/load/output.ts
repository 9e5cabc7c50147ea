import type { YamlSource } from './read-yaml.js';
import type { SpecProblem } from './spec-error.js';
import type { ModelField, ModelOutput, OutputContainer, OutputVocabulary, RawModel } from './types.js';

type Report = (path: (string | number)[], message: string) => void;

const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/** spec/shared/output.yaml: containers, the last-frame image, codec names, the default frame rate, the simulator's stand-ins. */
export function checkOutputVocabulary(
  source: YamlSource,
  standard: Record<string, Record<string, string>> | undefined,
  problems: SpecProblem[],
): OutputVocabulary {
  const data = (source.data ?? {}) as Partial<OutputVocabulary>;
  const at = (path: (string | number)[], message: string) => problems.push(source.problem(path, message));
  const containers = data.containers ?? {};
  if (Object.keys(containers).length === 0) at(['containers'], 'containers must name at least one container');
  for (const [name, c] of Object.entries(containers)) {
    for (const key of ['label', 'mime', 'extension'] as const)
      if (!isText(c?.[key])) at(['containers', name, key], `container ${name} needs a ${key}`);
    if (
      !Array.isArray(c?.brands) ||
      c.brands.length === 0 ||
      !c.brands.every((b) => typeof b === 'string' && b.length === 4)
    ) {
      at(['containers', name, 'brands'], `container ${name} needs brands: four-character codes, the major brand first`);
    }
  }
  if (!isText(data.defaultContainer) || !containers[data.defaultContainer])
    at(['defaultContainer'], 'defaultContainer must name one of the containers');
  for (const key of ['label', 'mime', 'extension'] as const)
    if (!isText(data.lastFrame?.[key])) at(['lastFrame', key], `lastFrame needs a ${key}`);
  const codecs = data.codecs ?? {};
  if (Object.keys(codecs).length === 0 || !Object.values(codecs).every(isText))
    at(['codecs'], 'codecs must map codec names to their labels');
  const rate = data.frameRate?.value;
  if (!Number.isInteger(rate) || rate! < 1)
    at(['frameRate', 'value'], 'frameRate.value must be a whole number of frames per second');
  if (!isText(data.frameRate?.reason)) at(['frameRate', 'reason'], 'frameRate needs the reason for the assumed rate');
  if (!isText(data.simulator?.codec) || !codecs[data.simulator.codec])
    at(['simulator', 'codec'], 'simulator.codec must name one of the codecs');
  const ratio = data.simulator?.shapeFollowingReferences;
  if (!isText(ratio) || !standard?.[ratio])
    at(
      ['simulator', 'shapeFollowingReferences'],
      'simulator.shapeFollowingReferences must be an aspect ratio of the standard size table',
    );
  return data as OutputVocabulary;
}

/**
 * A model's output: its frame rate (published in `output.frameRate`, else the assumed default,
 * added to its assumptions), the containers its `output_format` values name, the last-frame image
 * where it has `return_last_frame`, the codecs it publishes per resolution, and the frame the
 * simulator returns at each resolution where the shape follows the references.
 */
export function expandOutput(
  raw: RawModel['output'],
  fields: Map<string, ModelField>,
  table: Record<string, Record<string, string>> | undefined,
  standard: Record<string, Record<string, string>>,
  vocabulary: OutputVocabulary,
  at: Report,
): ModelOutput | undefined {
  const before: string[] = [];
  const report: Report = (path, message) => {
    before.push(message);
    at(path, message);
  };
  const format = fields.get('output_format');
  const formatValues = (format?.schema.enum as string[] | undefined) ?? [vocabulary.defaultContainer];
  const containers: OutputContainer[] = [];
  for (const name of formatValues) {
    const container = vocabulary.containers[name];
    if (!container)
      report(
        ['fields', 'output_format'],
        `output_format value "${name}" is not a container of spec/shared/output.yaml`,
      );
    else containers.push({ name, ...container });
  }
  const defaultContainer = format ? (format.schema.default as string | undefined) : vocabulary.defaultContainer;
  if (!defaultContainer)
    report(
      ['fields', 'output_format'],
      'output_format needs a default (the container returned when a request names none)',
    );

  const resolutions = fields.get('resolution')?.schema.enum as string[] | undefined;
  if (!resolutions) {
    report(['fields'], 'a model needs a resolution field with fixed values: its output size follows from it');
    return undefined;
  }
  const codecs = raw?.codecs ?? {};
  for (const [resolution, codec] of Object.entries(codecs)) {
    if (!resolutions.includes(resolution))
      report(
        ['output', 'codecs', resolution],
        `"${resolution}" is not a value of resolution (${resolutions.join(', ')})`,
      );
    if (!vocabulary.codecs[codec])
      report(
        ['output', 'codecs', resolution],
        `unknown codec "${codec}" (${Object.keys(vocabulary.codecs).join(', ')})`,
      );
  }

  const ratio = vocabulary.simulator.shapeFollowingReferences;
  const simulatorSizes: Record<string, string> = {};
  for (const resolution of resolutions) {
    const size = table?.[ratio]?.[resolution] ?? standard[ratio]?.[resolution];
    if (!size)
      report(
        ['fields', 'resolution'],
        `resolution ${resolution} has no ${ratio} size in the model's table or the standard table (spec/shared/output-sizes.yaml)`,
      );
    else simulatorSizes[resolution] = size;
  }
  const ratios = fields.get('aspect_ratio')?.schema.enum as string[] | undefined;
  if (before.length) return undefined;
  return {
    frameRate: raw?.frameRate ?? vocabulary.frameRate.value,
    frameRatePublished: raw?.frameRate !== undefined,
    containers,
    defaultContainer: defaultContainer!,
    lastFrame: fields.has('return_last_frame') ? vocabulary.lastFrame : undefined,
    codecs,
    hasAspectRatio: ratios !== undefined,
    ratiosFollowingReferences: (ratios ?? []).filter((r) => !table?.[r]),
    simulator: { codec: vocabulary.simulator.codec, ratio, sizes: simulatorSizes },
  };
}

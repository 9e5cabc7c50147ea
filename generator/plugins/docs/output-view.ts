import type { Model, OutputVocabulary } from '../../load/types.js';

const code = (value: string) => `\`${value}\``;
const list = (items: string[]) =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;

/** Resolutions grouped by the codec they map to, in resolution order: [[codec, [480p, 720p]], ...]. */
function byCodec(codecs: Record<string, string>): [string, string[]][] {
  const groups = new Map<string, string[]>();
  for (const [resolution, codec] of Object.entries(codecs))
    groups.set(codec, [...(groups.get(codec) ?? []), resolution]);
  return [...groups.entries()];
}

/**
 * The "Output" section of a model's page, as sentences: what the model's file is (container,
 * frame rate, frame size, codec, last frame), then what the built-in simulator returns and where
 * it differs from the model. Every fact comes from spec/ (the model's file and spec/shared/output.yaml).
 */
export function outputView(model: Model, vocabulary: OutputVocabulary) {
  const out = model.output;
  const hasField = (name: string) => model.fields.some((f) => f.name === name);
  const containerText = (c: (typeof out.containers)[number]) =>
    `${c.label} (${code(c.mime)}, ${code(`.${c.extension}`)})`;
  const facts: string[] = [];

  facts.push(
    hasField('output_format')
      ? `File: set by ${code('output_format')}: ${out.containers.map((c) => `${code(c.name)}${c.name === out.defaultContainer ? ' (default)' : ''}: ${containerText(c)}`).join('; ')}.`
      : `File: ${containerText(out.containers[0])}.`,
  );
  facts.push(
    `Frame rate: ${out.frameRate} frames per second${out.frameRatePublished ? '' : ' (assumed: the specification publishes none for this model; see Assumptions)'}.`,
  );
  const following = out.ratiosFollowingReferences.map((r) => code(r));
  if (!out.hasAspectRatio)
    facts.push(
      `Frame size: the shape follows the input (the supplied frame or clip; there is no ${code('aspect_ratio')}), at the size ${code('resolution')} asks for.`,
    );
  else {
    facts.push(
      `Frame size: the width and height of the output sizes table for the request's ${code('aspect_ratio')} and ${code('resolution')}${following.length ? `; with ${code('aspect_ratio')} ${list(following)} the model chooses the shape (from the references, where there are any)` : ''}.`,
    );
  }
  const published = byCodec(out.codecs);
  facts.push(
    published.length
      ? `Video codec: ${published.map(([codec, resolutions]) => `${list(resolutions)}: ${vocabulary.codecs[codec]}`).join('; ')}.`
      : 'Video codec: not published.',
  );
  if (out.lastFrame) {
    facts.push(
      `Last frame: with ${code('return_last_frame')} ${code('true')} the task has a second output asset, the final frame as a ${out.lastFrame.label} image (${code(out.lastFrame.mime)}) of the same width and height.`,
    );
  }

  const simulatorCodec = vocabulary.codecs[out.simulator.codec];
  const sound = hasField('generate_audio')
    ? `a silent stereo AAC-LC track (none when ${code('generate_audio')} is ${code('false')})`
    : 'a silent stereo AAC-LC track';
  const simulator = `The built-in simulator deployment (the service's default) returns a real, playable file for every task of this model: colour bars in ${simulatorCodec} (Constrained Baseline, 8-bit 4:2:0) at the frame size, frame rate and container above, exactly as long as the output, with ${sound}${out.lastFrame ? ', and the last-frame image when it is asked for' : ''}. Where it cannot make what the model makes, it differs:`;
  const differences = ['The picture is colour bars, not generated content.'];
  const sizes = Object.entries(out.simulator.sizes).map(([resolution, size]) => `${resolution} ${size}`);
  const standIn = (what: string) =>
    `the simulator does not read ${what} and returns the ${out.simulator.ratio} size of the asked resolution: ${list(sizes)}.`;
  if (!out.hasAspectRatio)
    differences.push(`The model's frame shape follows the supplied frame or clip; ${standIn('it')}`);
  else if (following.length)
    differences.push(
      `With ${code('aspect_ratio')} ${list(following)} the model chooses the shape; ${standIn('the references')}`,
    );
  for (const [codec, resolutions] of published) {
    if (codec !== out.simulator.codec)
      differences.push(
        `At ${list(resolutions)} the model returns ${vocabulary.codecs[codec]}; the simulator returns ${simulatorCodec} (8-bit).`,
      );
  }
  return { facts, simulator, differences };
}

/**
 * The specification's model ids besides reference-to-video, written from its table 'Other modes per
 * model family (by name only)'; shared by the generator and HTTP tests of the modes.
 */

/** One row per family version: the modes the table lists for it. */
export const OTHER_MODES: [string, string[]][] = [
  ['vendor_a/family_a-2.0-mini', ['text-to-video', 'image-to-video', 'video-extend']],
  ['vendor_a/family_a-2.0-fast', ['text-to-video', 'image-to-video', 'video-extend']],
  ['vendor_a/family_a-2.0', ['text-to-video', 'image-to-video', 'video-extend']],
  ['vendor_a/family_a-2.5', ['text-to-video', 'image-to-video', 'video-extend']],
  ['vendor_b/family_b-1.1', ['text-to-video', 'image-to-video']],
  ['vendor_b/family_c-3.0', ['text-to-video', 'image-to-video', 'video-extend']],
  ['vendor_b/family_c-3.0-prime', ['text-to-video', 'image-to-video', 'video-extend']],
  ['vendor_b/family_c-3.0-pro', ['text-to-video', 'image-to-video', 'video-extend']],
  ['vendor_b/family_c-3.0-pro-prime', ['text-to-video', 'image-to-video', 'video-extend']],
  ['vendor_b/family_c-2.6', ['text-to-video', 'image-to-video']],
  ['vendor_b/family_c-2.6-flash', ['image-to-video']],
  ['vendor_c/o3', ['text-to-video', 'image-to-video', 'video-edit']],
  ['vendor_c/4.0', ['text-to-video', 'image-to-video']],
  ['vendor_d/family_d', ['text-to-video', 'image-to-video', 'video-extend']],
  ['vendor_d/family_d-lora', ['text-to-video', 'image-to-video', 'video-extend']],
  ['vendor_d/family_d-variant-lora', ['image-to-video', 'video-extend']],
  ['vendor_e/q4-preview', ['image-to-video', 'video-extend']],
];
/** Every family version has a reference-to-video model: the 17 of the reference-to-video table. */
export const REFERENCE_TO_VIDEO = OTHER_MODES.map(([family]) => `${family}/reference-to-video`);
export const NEW_MODELS = OTHER_MODES.flatMap(([family, modes]) => modes.map((mode) => `${family}/${mode}`));
/** The new models of one mode. */
export const ofMode = (mode: string) => NEW_MODELS.filter((id) => id.endsWith(`/${mode}`));

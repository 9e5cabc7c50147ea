import { BitWriter } from './bit-writer.js';

/** AAC-LC at 48 kHz, stereo: what the simulated clips carry when sound is generated. */
export const AAC_SAMPLE_RATE = 48_000;
export const AAC_CHANNELS = 2;
/** Samples per channel in one AAC-LC frame. */
export const AAC_FRAME_SAMPLES = 1024;

const OBJECT_TYPE_AAC_LC = 2;
const FREQUENCY_INDEX_48000 = 3;

/** AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1): AAC-LC, 48 kHz, channel configuration 2, 1024-sample frames. */
export function audioSpecificConfig(): Buffer {
  return new BitWriter().u(5, OBJECT_TYPE_AAC_LC).u(4, FREQUENCY_INDEX_48000).u(4, AAC_CHANNELS).u(3, 0).finish();
}

/**
 * One raw AAC-LC frame of silence for a channel pair: a channel pair element whose two channels
 * code no scale factor band (max_sfb 0), so every spectral line is zero, then the end element.
 */
export function silentFrame(): Buffer {
  const w = new BitWriter();
  w.u(3, 1).u(4, 0).u(1, 0); // ID_CPE, element_instance_tag, common_window
  for (let channel = 0; channel < 2; channel++) {
    w.u(8, 100); // global_gain (any value: no band is coded)
    w.u(1, 0).u(2, 0).u(1, 0).u(6, 0).u(1, 0); // ics_info: reserved, ONLY_LONG_SEQUENCE, sine window, max_sfb 0, no prediction
    w.u(1, 0).u(1, 0).u(1, 0); // pulse, tns, gain control: absent
  }
  w.u(3, 7); // ID_END
  return w.alignZero().finish();
}

import { BitWriter } from './bit-writer.js';
import { ColourBars, toYCbCr } from './colour-bars.js';

/**
 * A still picture of colour bars as an H.264 Constrained Baseline stream (ITU-T H.264), written
 * directly: an IDR picture, then P pictures whose macroblocks are all skipped (the picture stays).
 * The IDR picture draws the first macroblock row of each band as raw samples (I_PCM) and every
 * other macroblock as Intra 16x16 vertical prediction with no residual, so it costs a few bits per
 * macroblock at any size. CAVLC, one slice per picture, deblocking off, picture order count type 2
 * (output order is decoding order: no B pictures). Sizes that are not a multiple of 16 are coded
 * a macroblock larger and cropped. The level is the lowest whose limits the size and rate fit.
 */
export class H264Bars {
  readonly widthInMbs: number;
  readonly heightInMbs: number;
  readonly levelIdc: number;
  /** Sequence and picture parameter sets, as NAL units (for the avcC box). */
  readonly sps: Buffer;
  readonly pps: Buffer;
  private readonly bars: ColourBars;

  constructor(
    readonly width: number,
    readonly height: number,
    readonly frameRate: number,
  ) {
    if (width % 2 || height % 2 || width < 2 || height < 2)
      throw new Error(`frame ${width}x${height}: 4:2:0 needs even sides`);
    this.widthInMbs = Math.ceil(width / 16);
    this.heightInMbs = Math.ceil(height / 16);
    this.levelIdc = levelFor(this.widthInMbs, this.heightInMbs, frameRate);
    this.bars = new ColourBars(this.widthInMbs, this.heightInMbs);
    this.sps = nalUnit(3, 7, this.spsRbsp());
    this.pps = nalUnit(3, 8, ppsRbsp());
  }

  /** Profile, constraint flags and level, as the avcC box and the `avc1.PPCCLL` codec string give them. */
  get profileIdc(): number {
    return PROFILE_BASELINE;
  }

  get constraintFlags(): number {
    return CONSTRAINED_BASELINE_FLAGS;
  }

  /** The IDR picture (frame_num 0), one NAL unit. */
  idrPicture(): Buffer {
    const w = new BitWriter();
    w.ue(0).ue(SLICE_I_ALL).ue(0).u(LOG2_MAX_FRAME_NUM, 0).ue(0); // first_mb, slice_type, pps id, frame_num, idr_pic_id
    w.u(1, 0).u(1, 0); // no_output_of_prior_pics_flag, long_term_reference_flag
    w.se(0).ue(1); // slice_qp_delta, disable_deblocking_filter_idc
    const pcm = new Map<string, Buffer>();
    for (let row = 0; row < this.heightInMbs; row++) {
      for (let column = 0; column < this.widthInMbs; column++) {
        if (this.bars.isBandStart(row)) {
          const colour = this.bars.colourAt(column, row);
          const key = colour.join();
          if (!pcm.has(key)) pcm.set(key, pcmSamples(colour));
          w.ue(MB_I_PCM).alignZero().raw(pcm.get(key)!);
          continue;
        }
        w.ue(MB_I16X16_VERTICAL).ue(CHROMA_VERTICAL).se(0); // mb_type, intra_chroma_pred_mode, mb_qp_delta
        // Intra16x16DCLevel: no coefficients. Its coeff_token table depends on nC, from the blocks
        // left (A) and above (B); an I_PCM neighbour counts 16 coefficients (H.264 9.2.1).
        const above = this.bars.isBandStart(row - 1) ? 16 : 0;
        const nC = column > 0 ? (0 + above + 1) >> 1 : above;
        if (nC >= 8) w.u(6, 0b000011);
        else w.u(1, 1);
      }
    }
    return nalUnit(3, 5, w.trailing().finish());
  }

  /** A P picture that repeats the previous one: every macroblock skipped. */
  skippedPicture(frameNum: number): Buffer {
    const w = new BitWriter();
    w.ue(0)
      .ue(SLICE_P_ALL)
      .ue(0)
      .u(LOG2_MAX_FRAME_NUM, frameNum % 2 ** LOG2_MAX_FRAME_NUM);
    w.u(1, 0).u(1, 0); // num_ref_idx_active_override_flag, ref_pic_list_modification_flag_l0
    w.u(1, 0); // adaptive_ref_pic_marking_mode_flag (a reference picture: sliding window)
    w.se(0).ue(1); // slice_qp_delta, disable_deblocking_filter_idc
    w.ue(this.widthInMbs * this.heightInMbs); // mb_skip_run: the whole picture
    return nalUnit(2, 1, w.trailing().finish());
  }

  private spsRbsp(): Buffer {
    const w = new BitWriter();
    w.u(8, PROFILE_BASELINE).u(8, CONSTRAINED_BASELINE_FLAGS).u(8, this.levelIdc).ue(0);
    w.ue(LOG2_MAX_FRAME_NUM - 4).ue(2); // log2_max_frame_num_minus4, pic_order_cnt_type 2
    w.ue(1).u(1, 0); // max_num_ref_frames, gaps_in_frame_num_value_allowed_flag
    w.ue(this.widthInMbs - 1).ue(this.heightInMbs - 1);
    w.u(1, 1).u(1, 1); // frame_mbs_only_flag, direct_8x8_inference_flag
    const cropRight = (this.widthInMbs * 16 - this.width) / 2; // in chroma sample units (4:2:0: 2 pixels)
    const cropBottom = (this.heightInMbs * 16 - this.height) / 2;
    if (cropRight || cropBottom) w.u(1, 1).ue(0).ue(cropRight).ue(0).ue(cropBottom);
    else w.u(1, 0);
    w.u(1, 1); // vui_parameters_present_flag
    w.u(1, 0); // aspect_ratio_info_present_flag (square pixels)
    w.u(1, 0); // overscan_info_present_flag
    w.u(1, 1).u(3, 5).u(1, 0).u(1, 1).u(8, 1).u(8, 1).u(8, 1); // video signal: unspecified format, limited range, BT.709
    w.u(1, 0); // chroma_loc_info_present_flag
    w.u(1, 1)
      .u(32, 1)
      .u(32, 2 * this.frameRate)
      .u(1, 1); // timing: a tick is half a frame (one field), fixed rate
    w.u(1, 0).u(1, 0).u(1, 0); // nal_hrd, vcl_hrd, pic_struct_present_flag
    w.u(1, 1).u(1, 1).ue(0).ue(0).ue(15).ue(15).ue(0).ue(1); // bitstream_restriction: no reordering, one frame buffered
    return w.trailing().finish();
  }
}

const PROFILE_BASELINE = 66;
/** constraint_set0_flag and constraint_set1_flag: Constrained Baseline. */
const CONSTRAINED_BASELINE_FLAGS = 0b1100_0000;
const LOG2_MAX_FRAME_NUM = 16;
const SLICE_P_ALL = 5;
const SLICE_I_ALL = 7;
const MB_I_PCM = 25;
/** I_16x16_0_0_0: Intra 16x16 vertical prediction, no coded luma or chroma blocks. */
const MB_I16X16_VERTICAL = 1;
const CHROMA_VERTICAL = 2;

function ppsRbsp(): Buffer {
  const w = new BitWriter();
  w.ue(0).ue(0); // pic_parameter_set_id, seq_parameter_set_id
  w.u(1, 0).u(1, 0); // entropy_coding_mode_flag (CAVLC), bottom_field_pic_order_in_frame_present_flag
  w.ue(0).ue(0).ue(0); // num_slice_groups_minus1, num_ref_idx_l0/l1_default_active_minus1
  w.u(1, 0).u(2, 0); // weighted_pred_flag, weighted_bipred_idc
  w.se(0).se(0).se(0); // pic_init_qp_minus26, pic_init_qs_minus26, chroma_qp_index_offset
  w.u(1, 1).u(1, 0).u(1, 0); // deblocking_filter_control_present_flag, constrained_intra_pred_flag, redundant_pic_cnt_present_flag
  return w.trailing().finish();
}

/** One macroblock of raw samples in one colour: 256 luma, 64 Cb, 64 Cr. */
function pcmSamples(colour: readonly [number, number, number]): Buffer {
  const [y, cb, cr] = toYCbCr(colour);
  return Buffer.concat([Buffer.alloc(256, y), Buffer.alloc(64, cb), Buffer.alloc(64, cr)]);
}

/** A NAL unit: its header byte, then the RBSP with emulation prevention bytes (no 00 00 0x with x <= 3 inside). */
function nalUnit(refIdc: number, type: number, rbsp: Buffer): Buffer {
  const out = Buffer.alloc(1 + rbsp.length + Math.ceil(rbsp.length / 2));
  out[0] = (refIdc << 5) | type;
  let at = 1;
  let zeros = 0;
  for (const byte of rbsp) {
    if (zeros >= 2 && byte <= 3) {
      out[at++] = 3;
      zeros = 0;
    }
    out[at++] = byte;
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return out.subarray(0, at);
}

/**
 * H.264 Table A-1: level_idc, MaxMBPS (macroblocks per second), MaxFS (macroblocks per frame).
 * MaxDpbMbs is at least MaxFS at every level, so one reference frame always fits; the bit rate of
 * a still picture is far below every level's MaxBR.
 */
const LEVELS: [number, number, number][] = [
  [10, 1485, 99],
  [11, 3000, 396],
  [12, 6000, 396],
  [13, 11880, 396],
  [20, 11880, 396],
  [21, 19800, 792],
  [22, 20250, 1620],
  [30, 40500, 1620],
  [31, 108000, 3600],
  [32, 216000, 5120],
  [40, 245760, 8192],
  [42, 522240, 8704],
  [50, 589824, 22080],
  [51, 983040, 36864],
  [52, 2073600, 36864],
  [60, 4177920, 139264],
  [61, 8355840, 139264],
  [62, 16711680, 139264],
];

/** The lowest level whose frame size, frame side (sqrt(8 MaxFS) macroblocks) and macroblock rate fit. */
export function levelFor(widthInMbs: number, heightInMbs: number, frameRate: number): number {
  const frame = widthInMbs * heightInMbs;
  for (const [idc, maxMbps, maxFs] of LEVELS) {
    const side = Math.sqrt(8 * maxFs);
    if (frame <= maxFs && widthInMbs <= side && heightInMbs <= side && frame * frameRate <= maxMbps) return idc;
  }
  throw new Error(`no H.264 level fits ${widthInMbs}x${heightInMbs} macroblocks at ${frameRate} fps`);
}

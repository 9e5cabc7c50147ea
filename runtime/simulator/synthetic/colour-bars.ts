/**
 * The picture of every simulated clip: colour bars on a whole-macroblock grid (16x16 pixels), so
 * that the H.264 writer can draw it with one raw macroblock row per band and the PNG writer draws
 * the same picture. Top two thirds: seven 75 % bars (white, yellow, cyan, green, magenta, red,
 * blue); bottom third: their castellations (blue, black, magenta, black, cyan, black, white).
 */
export type Rgb = readonly [number, number, number];

const HIGH = 191; // 75 % of 255
const TOP: Rgb[] = [
  [HIGH, HIGH, HIGH],
  [HIGH, HIGH, 0],
  [0, HIGH, HIGH],
  [0, HIGH, 0],
  [HIGH, 0, HIGH],
  [HIGH, 0, 0],
  [0, 0, HIGH],
];
const BOTTOM: Rgb[] = [
  [0, 0, HIGH],
  [0, 0, 0],
  [HIGH, 0, HIGH],
  [0, 0, 0],
  [0, HIGH, HIGH],
  [0, 0, 0],
  [HIGH, HIGH, HIGH],
];

/** The layout of the bars on a grid of macroblocks. */
export class ColourBars {
  /** The first macroblock row of the bottom band. */
  readonly bottomBandRow: number;

  constructor(
    readonly widthInMbs: number,
    readonly heightInMbs: number,
  ) {
    this.bottomBandRow = Math.max(1, Math.floor((heightInMbs * 2) / 3));
  }

  /** Rows drawn as raw samples (the first of each band); the rows below copy the row above. */
  isBandStart(mbRow: number): boolean {
    return mbRow === 0 || mbRow === this.bottomBandRow;
  }

  /** The colour of the macroblock at column `mbColumn` of row `mbRow`. */
  colourAt(mbColumn: number, mbRow: number): Rgb {
    const bar = Math.floor((mbColumn * TOP.length) / this.widthInMbs);
    return (mbRow < this.bottomBandRow ? TOP : BOTTOM)[bar];
  }
}

/** RGB (0-255) to limited-range BT.709 Y'CbCr, the colour space the H.264 stream declares. */
export function toYCbCr([r, g, b]: Rgb): [number, number, number] {
  const [R, G, B] = [r / 255, g / 255, b / 255];
  const y = 0.2126 * R + 0.7152 * G + 0.0722 * B;
  return [
    Math.round(16 + 219 * y),
    Math.round(128 + (224 * (B - y)) / 1.8556),
    Math.round(128 + (224 * (R - y)) / 1.5748),
  ];
}

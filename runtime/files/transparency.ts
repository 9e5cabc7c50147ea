/**
 * Whether an image format carries transparency, read from its header. No well-kept library
 * reports just this flag (image-size gives dimensions only; a decoder such as sharp would decode
 * every pixel), so this is a small reader of the documented header fields, nothing more:
 *
 * - PNG (ISO/IEC 15948): IHDR colour type 4 (grey + alpha) or 6 (RGBA), or a tRNS chunk before
 *   the first IDAT (palette or single-colour transparency).
 * - WebP (RFC 9649): the VP8X chunk's alpha flag (0x10), or the VP8L header's alpha_is_used bit;
 *   a simple lossy VP8 file has no alpha.
 * - GIF (89a): a Graphic Control Extension with its transparent-colour flag set.
 * - BMP: a V4/V5 header (>= 56 bytes) at 32 bits per pixel whose alpha mask is non-zero.
 * - JPEG has no alpha.
 *
 * "Transparency" is what the file declares it can hold: a PNG saved as RGBA counts even if every
 * pixel happens to be opaque, which is how the models' "PNG without transparency" rule is read.
 */
export function hasTransparency(format: string, bytes: Uint8Array): boolean {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (format) {
    case 'png':
      return pngAlpha(b);
    case 'webp':
      return webpAlpha(b);
    case 'gif':
      return gifAlpha(b);
    case 'bmp':
      return bmpAlpha(b);
    default:
      return false;
  }
}

function pngAlpha(b: Buffer): boolean {
  let offset = 8; // signature
  while (offset + 8 <= b.length) {
    const length = b.readUInt32BE(offset);
    const type = b.toString('latin1', offset + 4, offset + 8);
    const data = offset + 8;
    if (type === 'IHDR' && data + 10 <= b.length) {
      const colourType = b[data + 9];
      if (colourType === 4 || colourType === 6) return true;
    }
    if (type === 'tRNS') return true;
    if (type === 'IDAT' || type === 'IEND') return false;
    offset = data + length + 4; // data and CRC
  }
  return false;
}

function webpAlpha(b: Buffer): boolean {
  let offset = 12; // RIFF size WEBP
  while (offset + 8 <= b.length) {
    const type = b.toString('latin1', offset, offset + 4);
    const size = b.readUInt32LE(offset + 4);
    const data = offset + 8;
    if (type === 'VP8X' && data < b.length) return (b[data] & 0x10) !== 0;
    if (type === 'VP8L' && data + 5 <= b.length) return ((b.readUInt32LE(data + 1) >>> 28) & 1) === 1;
    if (type === 'VP8 ') return false;
    if (type === 'ALPH') return true;
    offset = data + size + (size & 1);
  }
  return false;
}

function gifAlpha(b: Buffer): boolean {
  for (let i = 13; i + 3 < b.length; i++) {
    if (b[i] === 0x21 && b[i + 1] === 0xf9 && b[i + 2] === 0x04 && (b[i + 3] & 0x01) === 1) return true;
  }
  return false;
}

function bmpAlpha(b: Buffer): boolean {
  if (b.length < 14 + 56) return false;
  const headerSize = b.readUInt32LE(14);
  const bitsPerPixel = b.readUInt16LE(28);
  if (headerSize < 56 || bitsPerPixel !== 32) return false;
  return b.readUInt32LE(14 + 52) !== 0;
}

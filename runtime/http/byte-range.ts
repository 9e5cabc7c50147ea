/**
 * What a `Range` header asks of an object of `size` bytes (RFC 9110 section 14.1.2): nothing
 * (absent, malformed, another unit, several ranges: the whole object is sent), one satisfiable
 * range (206, its end clipped to the last byte), or a range that is not within the object (416).
 */
export type RangeAnswer =
  | { kind: 'whole' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable' };

const WHOLE: RangeAnswer = { kind: 'whole' };
const UNSATISFIABLE: RangeAnswer = { kind: 'unsatisfiable' };
/** `first-last`, `first-` or `-suffix`, digits only (no sign, no space inside). */
const RANGE_SPEC = /^(?:(\d+)-(\d*)|-(\d+))$/;

export function answerRange(header: string | undefined, size: number): RangeAnswer {
  if (header === undefined) return WHOLE;
  const equals = header.indexOf('=');
  if (equals < 0 || header.slice(0, equals).trim().toLowerCase() !== 'bytes') return WHOLE;
  // A list may hold empty elements (`bytes=0-1, ,`), which count for nothing (RFC 9110 section 5.6.1).
  const specs = header
    .slice(equals + 1)
    .split(',')
    .map((spec) => spec.trim())
    .filter((spec) => spec !== '');
  if (specs.length === 0) return WHOLE;
  const parsed = specs.map((spec) => RANGE_SPEC.exec(spec));
  if (parsed.some((match) => match === null)) return WHOLE;
  // Several ranges would be a multipart answer: the whole object serves every player as well.
  if (parsed.length > 1) return WHOLE;
  const [, first, last, suffix] = parsed[0]!;
  if (suffix !== undefined) {
    const length = position(suffix);
    if (length === 0 || size === 0) return UNSATISFIABLE;
    return { kind: 'partial', start: Math.max(0, size - length), end: size - 1 };
  }
  const start = position(first!);
  const end = last === '' ? Number.MAX_SAFE_INTEGER : position(last!);
  // A last position before the first makes the range invalid, and an invalid Range is ignored.
  if (end < start) return WHOLE;
  if (start >= size) return UNSATISFIABLE;
  return { kind: 'partial', start, end: Math.min(end, size - 1) };
}

/** A byte position; one past what a number holds exactly is past the end of any object anyway. */
function position(digits: string): number {
  const value = Number(digits);
  return Number.isSafeInteger(value) ? value : Number.MAX_SAFE_INTEGER;
}

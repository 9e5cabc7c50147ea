/** One CSV line (RFC 4180): a field with a comma, quote or line break is quoted, quotes doubled. */
export function csvLine(fields: readonly (string | number)[]): string {
  return `${fields.map((f) => (typeof f === 'number' || !/[",\r\n]/.test(f) ? String(f) : `"${f.replaceAll('"', '""')}"`)).join(',')}\r\n`;
}

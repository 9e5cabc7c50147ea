/** A CSV answer (UTF-8, offered as a download named `filename`), never cached. */
export function csvReply(text: string, filename: string) {
  return {
    status: 200,
    raw: Buffer.from(text, 'utf8'),
    headers: {
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="${filename}"`,
      'Cache-Control': 'no-store',
    },
  };
}

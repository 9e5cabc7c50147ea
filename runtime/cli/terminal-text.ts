/**
 * What the CLI prints, made safe for the operator's terminal: control and format characters (ESC
 * and the rest of C0/C1, U+202E and the other bidirectional controls, zero-width characters) are
 * written as `\uXXXX`, each UTF-16 unit, so that a stored value (a user's email, an audit detail)
 * can neither drive the terminal nor reorder what is shown. Line breaks of the output itself stay.
 * In JSON output the same escape is JSON's own: the value parses back unchanged.
 */
export function terminalSafe(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}]/gu, (found) =>
    found === '\n'
      ? found
      : [...Array(found.length).keys()].map((i) => `\\u${found.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
}

/** One line of output, text or JSON, through terminalSafe. */
export function printSafe(json: boolean, value: unknown, text: string): void {
  console.log(terminalSafe(json ? JSON.stringify(value) : text));
}

/**
 * uPlot, loaded once the browser's language is one Intl takes. uPlot formats numbers with
 * `new Intl.NumberFormat(navigator.language)` when its module is evaluated, and Intl refuses some
 * tags a browser reports (headless Chromium under LANG=C.UTF-8 says `en-US@posix`): the module then
 * throws, and a page importing it statically never got past "Loading…" (issue 28, item 7). Such a
 * browser is given `en` for that number format; the page's own texts follow the page's language.
 */
export type UPlot = typeof import('uplot');

/** Whether Intl takes the tag (a RangeError otherwise). */
function intlTakes(tag: string): boolean {
  try {
    new Intl.NumberFormat(tag);
    return true;
  } catch {
    return false;
  }
}

export async function loadChartLibrary(): Promise<UPlot> {
  if (!intlTakes(navigator.language)) Object.defineProperty(navigator, 'language', { value: 'en', configurable: true });
  return (await import('uplot')).default;
}

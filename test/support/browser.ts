/**
 * What every browser suite does first: launch the system Chromium (system-browser.ts) headless and
 * quiet, and keep a context's pages on the service's own origin (a request for another host is
 * recorded and never sent, so a suite can assert there were none).
 */
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { systemBrowser } from './system-browser.js';

/** No sandbox (the tests run in containers), no GPU, and nothing the browser would ask of the internet on its own. */
const QUIET = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

/** A headless system Chromium; `extra` adds the flags one suite needs (autoplay, say). */
export function launchBrowser(extra: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: systemBrowser(), headless: true, args: [...QUIET, ...extra] });
}

/**
 * Routes every request of `context`: one for `origin` goes on; any other is pushed to `blocked` and
 * aborted. `seen`, when given, records every URL asked for, sent or not.
 */
export async function confineToOrigin(
  context: BrowserContext,
  origin: string,
  blocked: string[],
  seen?: string[],
): Promise<void> {
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    seen?.push(url);
    if (new URL(url).origin !== origin) {
      blocked.push(url);
      return route.abort('blockedbyclient');
    }
    return route.continue();
  });
}

/** A browser with one context confined to the service's origin, and what its pages did that a suite forbids. */
export interface ConfinedBrowser {
  browser: Browser;
  context: BrowserContext;
  /** Requests for another origin, refused before they were sent. */
  foreign: string[];
  /** The pages' uncaught errors. */
  problems: string[];
  /** A new page of the context, its uncaught errors recorded in `problems`. */
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** What a console suite starts with: a headless browser (`flags` as launchBrowser's) and one context confined to `origin`. */
export async function openConfined(
  origin: string,
  options: { flags?: string[]; viewport?: { width: number; height: number } } = {},
): Promise<ConfinedBrowser> {
  const browser = await launchBrowser(options.flags);
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 1000 } });
  const foreign: string[] = [];
  const problems: string[] = [];
  await confineToOrigin(context, origin, foreign);
  return {
    browser,
    context,
    foreign,
    problems,
    async newPage() {
      const page = await context.newPage();
      page.on('pageerror', (error) => problems.push(`page error ${error.message}`));
      return page;
    },
    async close() {
      await context.close();
      await browser.close();
    },
  };
}

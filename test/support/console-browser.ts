/** Headless Chromium for the console's suites (docs/console.md): launching it, watching what pages ask for, signing in. */
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { existsSync } from 'node:fs';
import { describeWith } from './prerequisites';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

/** `describe` with Debian's chromium installed; else a failure at load naming it. */
export const describeWithChromium = describeWith(existsSync(CHROMIUM) ? CHROMIUM : null, 'chromium');

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** A context that records every URL asked for and every script error, and accepts dialogs (confirm). */
export async function watchedContext(browser: Browser, requested: string[], pageErrors: string[]): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  context.on('request', (request) => requested.push(request.url()));
  context.on('page', (p) => {
    p.on('pageerror', (error) => pageErrors.push(error.message));
    p.on('dialog', (dialog) => void dialog.accept());
  });
  return context;
}

/** Opens a sign-in link and presses its button: the console then shows the keys page. */
export async function signIn(context: BrowserContext, baseUrl: string, linkPath: string): Promise<Page> {
  const opened = await context.newPage();
  await opened.goto(`${baseUrl}${linkPath}`);
  await opened.getByRole('button', { name: 'Sign in' }).click();
  await opened.getByRole('heading', { name: 'API keys' }).waitFor();
  return opened;
}

/** GET /docs: the reference page renders in headless Chromium from this service alone. */
import { chromium, Browser, Page } from 'playwright-core';
import { existsSync } from 'node:fs';
import { useTestApp } from './support/app';
import { DATABASE_MODES } from './support/databases';
import { describeWith } from './support/prerequisites';

const CHROMIUM = '/usr/bin/chromium';
const describeWithChromium = describeWith(existsSync(CHROMIUM) ? CHROMIUM : null, 'chromium');

/** In the page (the tests' types have no DOM): scrolls half a viewport, lets the list render, says whether it was at the bottom. */
const SCROLL_HALF_A_VIEWPORT = `(async () => {
  const before = window.scrollY;
  window.scrollBy(0, window.innerHeight / 2);
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  return window.scrollY === before;
})()`;

/**
 * Scrolls the page from top to bottom as a reader would, collecting the tag headings and operation paths rendered on
 * the way. Swagger UI (5.3x) virtualizes the operation list once it has 150 entries (tag headings plus the operations
 * of expanded tags): only what is near the viewport is in the page, so nothing below the fold can be found unscrolled.
 */
async function scrollThroughOperations(page: Page) {
  const tags = new Set<string>();
  const paths = new Set<string>();
  await page.locator('.opblock-tag').first().waitFor({ timeout: 20_000 });
  await page.evaluate('window.scrollTo(0, 0)');
  for (let atBottom = false; !atBottom; ) {
    for (const tag of await page.locator('.opblock-tag').evaluateAll((els) => els.map((el) => el.getAttribute('data-tag')))) tags.add(tag!);
    for (const path of await page.locator('.opblock-summary-path').allInnerTexts()) paths.add(path.trim());
    atBottom = (await page.evaluate(SCROLL_HALF_A_VIEWPORT)) as boolean;
  }
  return { tags, paths };
}

describeWithChromium('API reference page', () => {
  const suite = useTestApp(DATABASE_MODES.find((m) => m.name === 'pglite')!);
  let browser: Browser | undefined;
  let baseUrl: string;

  beforeAll(async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = await suite.t.app.getUrl();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  });
  afterAll(async () => browser?.close());

  it('renders the reference with every tool’s operation and asks nothing of anyone but the service', async () => {
    const context = await browser!.newContext();
    const page = await context.newPage();
    const requested: string[] = [];
    const failed: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('requestfailed', (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`));
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));

    const response = await page.goto(`${baseUrl}/docs`);
    expect(response?.status()).toBe(200);
    const rendered = await scrollThroughOperations(page);
    for (const toolId of ['json-transform', 'log-analysis', 'secret-scan']) expect(rendered.paths).toContain(`/v1/tools/${toolId}/invoke`);
    expect(rendered.paths).toContain('/v1/executions/{execution_id}');
    // Every tag section renders somewhere on the page: none is lost past the virtualization threshold.
    const documentTags = (await page.evaluate('window.ui.specSelectors.taggedOperations().keySeq().toArray()')) as string[];
    expect([...rendered.tags].sort()).toEqual([...documentTags].sort());
    // A deep link reaches an operation below the fold: Swagger UI scrolls its virtualized list to it.
    const linked = await context.newPage();
    await linked.goto(`${baseUrl}/docs#/Tools%20by%20id/invokeJsonTransform`);
    await linked.locator('.opblock-summary-path', { hasText: '/v1/tools/json-transform/invoke' }).first().waitFor({ timeout: 20_000 });
    expect(await page.locator('.info .title').innerText()).toContain('Tool Orchestration Service');

    expect(requested.length).toBeGreaterThanOrEqual(4);
    expect(requested.filter((url) => !url.startsWith(`${baseUrl}/`) && !url.startsWith('data:'))).toEqual([]);
    expect(requested).toContain(`${baseUrl}/v1/openapi.json`);
    expect(failed).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  it('serves only its own files under /docs', async () => {
    expect((await suite.t.request({ method: 'GET', url: '/docs/swagger-ui.css' })).statusCode).toBe(200);
    expect((await suite.t.request({ method: 'GET', url: '/docs/package.json' })).statusCode).toBe(404);
    expect((await suite.t.request({ method: 'GET', url: '/docs/..%2Fpackage.json' })).statusCode).toBe(404);
  });
});

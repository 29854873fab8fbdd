import path from 'node:path';
import axe from 'axe-core';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { ENGINE } from '../harness.js';

/** axe-core on the page as it is: no serious or critical violation. */
async function expectAccessible(page: Page, name: string): Promise<void> {
  await page.evaluate(axe.source);
  const violations = await page.evaluate(async () => {
    const result = await (
      window as unknown as {
        axe: {
          run(c: Document, o: object): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }>;
        };
      }
    ).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious, `${name}: ${JSON.stringify(serious)}`).toEqual([]);
}

/**
 * A console screen checked and kept for looking at: axe at 1280 px and at 320 px, no sideways
 * scrolling at 320 px, and a full-page screenshot at each width into `dir`.
 */
export function screenShooter(dir: string) {
  return async (page: Page, name: string): Promise<void> => {
    await expectAccessible(page, name);
    await page.screenshot({ path: path.join(dir, `${ENGINE}-${name}-1280.png`), fullPage: true });
    await page.setViewportSize({ width: 320, height: 640 });
    await page.waitForTimeout(100); // a chart redraws for the new width
    await expectAccessible(page, `${name} at 320 px`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, `${name} scrolls sideways at 320 px`).toBeLessThanOrEqual(0);
    await page.screenshot({ path: path.join(dir, `${ENGINE}-${name}-320.png`), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
  };
}

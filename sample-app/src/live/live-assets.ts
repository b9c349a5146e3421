import type { NestExpressApplication } from '@nestjs/platform-express';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Serves the live page (`sample-app/public/`, plain files, no build step) at `/`, and Chart.js's
 * browser build from node_modules at `/vendor/chart.js/`. Express's static middleware comes with
 * @nestjs/platform-express, so this needs no other package.
 */
export function serveLivePage(app: NestExpressApplication): void {
  app.useStaticAssets(publicDir());
  const chartJs = dirname(createRequire(import.meta.url).resolve('chart.js'));
  app.useStaticAssets(chartJs, { prefix: '/vendor/chart.js/' });
}

/**
 * `sample-app/public/`, found by walking up from this file: it runs compiled from
 * `sample-app/dist/sample-app/src/live/` and, in tests, from `sample-app/src/live/`.
 */
function publicDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'public', 'index.html'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('sample-app/public/index.html not found');
    dir = parent;
  }
  return join(dir, 'public');
}

import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { loadSeckillConfig } from './config/seckill.config.js';
import { serveLivePage } from './live/live-assets.js';

async function bootstrap(): Promise<void> {
  const config = loadSeckillConfig();
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forConfig(config), {
    logger: ['error', 'warn'],
  });
  serveLivePage(app);
  // SIGTERM/SIGINT close the app: held locks are released and connections closed.
  app.enableShutdownHooks();
  await app.listen(config.port, '127.0.0.1');
  console.log(`seckill sample listening on ${await app.getUrl()} (pid ${process.pid})`);
}

bootstrap().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

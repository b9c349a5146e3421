import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { ScheduleModule } from '@nestjs/schedule';
import { LockModule } from 'nestjs-distributed-lock';
import { AppController } from './app.controller.js';
import { AppService } from './app.service.js';
import { ReportJob } from './report.job.js';

@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true }),
    ScheduleModule.forRoot(),
    LockModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        redis: config.getOrThrow<string>('REDIS_URL'),
      }),
    }),
  ],
  controllers: [AppController],
  providers: [AppService, ReportJob],
})
export class AppModule {}

import { Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { DistributedLock } from 'nestjs-distributed-lock';

/** Runs once per tick across every instance: the others skip it. */
@Injectable()
export class ReportJob {
  runs = 0;

  @Cron(CronExpression.EVERY_SECOND)
  @DistributedLock('report', { onBusy: 'skip', minHold: 500 })
  run(): void {
    this.runs++;
  }
}

import { Injectable } from '@nestjs/common';
import { DistributedLock } from 'nestjs-distributed-lock';

@Injectable()
export class AppService {
  private reserved = 0;
  private inside = 0;
  /** The most callers ever inside `reserve` at once. */
  mostInside = 0;

  getHello(): string {
    return 'Hello World!';
  }

  @DistributedLock('stock:{0}')
  async reserve(sku: string) {
    this.mostInside = Math.max(this.mostInside, ++this.inside);
    await new Promise((resolve) => setTimeout(resolve, 5));
    this.inside--;
    return { sku, reserved: ++this.reserved };
  }
}

import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';

export interface StockBody {
  readonly stock: number;
}

/** `{ "stock": N }` with N a whole number from 0 to 1 000 000 000. */
@Injectable()
export class StockBodyPipe implements PipeTransform<unknown, StockBody> {
  transform(body: unknown): StockBody {
    const stock = (body as { stock?: unknown } | undefined)?.stock;
    if (typeof stock !== 'number' || !Number.isSafeInteger(stock) || stock < 0 || stock > 1e9) {
      throw new BadRequestException('Body must be { "stock": N } with N a whole number ≥ 0.');
    }
    return { stock };
  }
}

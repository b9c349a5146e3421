import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';

/** Product ids are positive integers: `/products/42`. */
@Injectable()
export class ProductIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    const id = /^[1-9]\d{0,15}$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(id)) {
      throw new BadRequestException(
        `Product id must be a positive integer, got "${String(value).slice(0, 40)}".`,
      );
    }
    return id;
  }
}

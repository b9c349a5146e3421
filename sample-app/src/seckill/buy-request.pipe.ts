import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';

export interface BuyRequest {
  readonly userId: string;
}

const userIdPattern = /^[A-Za-z0-9_.@-]{1,64}$/;

/** `{ "userId": "u1" }`: 1–64 letters, digits or `_ . @ -`. */
@Injectable()
export class BuyRequestPipe implements PipeTransform<unknown, BuyRequest> {
  transform(body: unknown): BuyRequest {
    const userId = (body as { userId?: unknown } | undefined)?.userId;
    if (typeof userId !== 'string' || !userIdPattern.test(userId)) {
      throw new BadRequestException(
        'Body must be { "userId": "..." } with 1–64 letters, digits or _ . @ - characters.',
      );
    }
    return { userId };
  }
}

import { ConflictException, NotFoundException } from '@nestjs/common';
import { StaleFenceError, type LockLostError } from 'nestjs-distributed-lock';

export interface Order {
  readonly orderId: string;
  readonly productId: number;
  readonly userId: string;
}

/** The sale's refusals, each a 409 or 404 with a machine-readable `code`. */
export const refuse = {
  soldOut: () => new ConflictException({ statusCode: 409, code: 'SOLD_OUT', message: 'Sold out.' }),
  alreadyOrdered: (userId: string) =>
    new ConflictException({
      statusCode: 409,
      code: 'ALREADY_ORDERED',
      message: `${userId} already has an order for this product.`,
    }),
  busy: () =>
    new ConflictException({
      statusCode: 409,
      code: 'BUSY',
      message: 'Too many buyers right now; try again.',
    }),
  unknownProduct: (productId: number) =>
    new NotFoundException({
      statusCode: 404,
      code: 'NOT_FOUND',
      message: `No product ${productId}.`,
    }),
};

/** `onBusy` for the sale's locks: a lock wait that ran out answers 409 BUSY. */
export function answerBusy(): never {
  throw refuse.busy();
}

/**
 * `onLost` for the sale's locks. A buyer whose lock was lost while it sold (it paused past its
 * lease) either had its stock write refused by the fence, so nothing was sold (409, retry), or
 * wrote unfenced, so the sale may be wrong: that stays a `LockLostError` (503).
 */
export function answerLost(error: LockLostError): never {
  if (error.cause instanceof StaleFenceError) throw error.cause;
  throw error;
}

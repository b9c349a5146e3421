import {
  HttpException,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { LockError } from 'nestjs-distributed-lock';
import { tap, type Observable } from 'rxjs';
import { LiveStats } from './live-stats.service.js';

/**
 * Counts every answer of the buy endpoints for the live page, by endpoint, status and code. It
 * only watches: the answer and the error go on unchanged to the client and the exception filters.
 */
@Injectable()
export class SaleCounter implements NestInterceptor {
  constructor(private readonly stats: LiveStats) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const path: string = context.switchToHttp().getRequest<{ path: string }>().path;
    const endpoint = path.slice(path.lastIndexOf('/') + 1);
    return next.handle().pipe(
      tap({
        next: () => this.stats.countAnswer(endpoint, 201),
        error: (error: unknown) => this.stats.countAnswer(endpoint, ...statusAndCode(error)),
      }),
    );
  }
}

/** The status and code the client will see: the app's refusals carry `code`, lock errors theirs. */
function statusAndCode(error: unknown): [number, string] {
  if (error instanceof LockError) return [error.statusCode, error.code];
  if (error instanceof HttpException) {
    const body = error.getResponse() as { code?: unknown };
    return [error.getStatus(), typeof body?.code === 'string' ? body.code : 'ERROR'];
  }
  return [500, 'ERROR'];
}

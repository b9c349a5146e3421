import { Catch, Logger, Optional, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { throwError, type Observable } from 'rxjs';
import { LockError, LockOptionsError } from '../../errors/lock.errors.js';

/** What a client is told about a lock error: its status, code and resource, nothing internal. */
export interface LockErrorBody {
  readonly statusCode: number;
  readonly error: string;
  readonly message: string;
  readonly resource?: string;
}

export function lockErrorBody(error: LockError): LockErrorBody {
  return {
    statusCode: error.statusCode,
    error: error.code,
    message: error.publicMessage,
    ...(error.key === undefined ? {} : { resource: error.key }),
  };
}

/**
 * Answers lock errors that escape a handler, registered by `LockModule` for the whole app. A
 * busy lock (409), a bad key (400) or a stale fence (409) is an expected outcome, and a store
 * outage (503) is logged once by the module, not per request: none is logged here. Only wiring
 * mistakes (`LockOptionsError`, 500) are, with their stack. The body names the resource, never
 * the class, method or Redis address that `message` may hold. RPC calls fail with the body as
 * their error, and WebSocket clients get it as an `exception` event, as Nest's own filters do.
 */
@Catch(LockError)
export class LockExceptionFilter implements ExceptionFilter<LockError> {
  private static readonly logger = new Logger('LockModule');

  constructor(@Optional() private readonly adapterHost?: HttpAdapterHost) {}

  catch(error: LockError, host: ArgumentsHost): Observable<never> | LockError | void {
    if (error instanceof LockOptionsError) LockExceptionFilter.logger.error(error);
    const body = lockErrorBody(error);
    switch (host.getType<string>()) {
      case 'http':
        return this.reply(body, host);
      case 'rpc':
        return throwError(() => ({ status: 'error', ...body }));
      case 'ws':
        host
          .switchToWs()
          .getClient<{ emit?: (event: string, data: unknown) => void }>()
          .emit?.('exception', { status: 'error', ...body });
        return;
      default:
        // GraphQL and other contexts format errors themselves.
        return error;
    }
  }

  private reply(body: LockErrorBody, host: ArgumentsHost): void {
    const adapter = this.adapterHost?.httpAdapter;
    const response = host.switchToHttp().getResponse<unknown>();
    if (!adapter) return;
    if (adapter.isHeadersSent(response)) return void adapter.end(response);
    adapter.reply(response, body, body.statusCode);
  }
}

// `nestjs-distributed-lock/health`: the terminus health indicator. A separate entry point, so
// that only apps that use it need `@nestjs/terminus`.
export {
  LockHealthIndicator,
  type LockHealthOptions,
} from '../nest/health/lock-health.indicator.js';

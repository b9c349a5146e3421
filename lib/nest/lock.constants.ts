/* The module's defaults, each named once. */
export { DEFAULT_LOCAL_HANDOFFS, DEFAULT_POLL_CAP } from '../policy/wait-policy.js';

export const DEFAULT_KEY_PREFIX = 'lock:';
export const DEFAULT_STORE_TIMEOUT = 5_000;
export const DEFAULT_BUSY_STATUS_CODE = 409;
export const DEFAULT_SHUTDOWN_TIMEOUT = 10_000;

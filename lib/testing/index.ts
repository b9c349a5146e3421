export { MemoryLockStore } from '../stores/memory/memory-lock.store.js';

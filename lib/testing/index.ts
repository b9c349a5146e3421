/*
 * The testing entry point (`nestjs-distributed-lock/testing`): the memory store and
 * `LockTestingModule`.
 */
export { MemoryLockStore } from '../stores/memory/memory-lock.store.js';
export { LockTestingModule, type LockTestingModuleOptions } from './lock-testing.module.js';

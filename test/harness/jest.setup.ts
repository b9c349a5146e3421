import { captureLockModuleLogs, lockModuleLog } from './lock-logs.js';

// Every project (unit, integration, chaos, scale): no `[LockModule]` line reaches the console.
captureLockModuleLogs();

afterEach(() => {
  lockModuleLog.lines.length = 0;
});

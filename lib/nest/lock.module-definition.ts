import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { LockModuleOptions } from './interfaces/lock-module-options.interface.js';

/*
 * The module's definition: `forRoot`/`forRootAsync` and their options, built with Nest's
 * `ConfigurableModuleBuilder`.
 */

export const {
  ConfigurableModuleClass: ConfigurableLockModule,
  MODULE_OPTIONS_TOKEN: LOCK_MODULE_OPTIONS,
  OPTIONS_TYPE: LOCK_MODULE_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: LOCK_MODULE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<LockModuleOptions>()
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createLockOptions')
  .setExtras({ isGlobal: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();

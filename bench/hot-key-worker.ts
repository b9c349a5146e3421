/**
 * A worker process of the multi-process hot-key cell. The parent sends `init` (connect the
 * contenders it names), then one `run` per measured run, then `exit`; each gets one reply.
 */
import { clientCommandSnapshot, countClientCommands, delta } from './command-counter.js';
import {
  closeAll,
  createLockContenders,
  type Contender,
  type LockContenderName,
} from './contenders/index.js';
import { warmUp } from './context.js';
import { runHotKeyLoop, type HotKeyLoopConfig } from './hot-key-loop.js';
import { toWire } from './sections.js';
import { serveParent, type Message } from './worker-pool.js';

let contenders: Contender[] = [];

async function handle(message: Message): Promise<Message> {
  switch (message.type) {
    case 'init': {
      countClientCommands();
      const names = message.names as LockContenderName[];
      contenders = await createLockContenders(names, String(message.url), 'hot-key');
      for (const contender of contenders) await warmUp(contender, Number(message.warmUpMs));
      const settings = Object.fromEntries(contenders.map(({ name, settings }) => [name, settings]));
      return { type: 'ready', settings };
    }
    case 'run': {
      const contender = contenders.find((candidate) => candidate.name === message.contender);
      if (!contender) throw new Error(`no contender "${String(message.contender)}"`);
      const before = clientCommandSnapshot();
      const result = await runHotKeyLoop(contender, message.config as HotKeyLoopConfig);
      return {
        type: 'result',
        sections: result.sections.map(toWire),
        perWorker: result.perWorker,
        waitsMs: result.waitsMs,
        gaveUp: result.gaveUp,
        windowEnd: String(result.windowEnd),
        client: delta(clientCommandSnapshot(), before),
      };
    }
    case 'exit':
      await closeAll(contenders);
      process.exit(0);
  }
  throw new Error(`unknown message "${message.type}"`);
}

serveParent(handle);

import { refusesCorePath, storeRefusalOf } from './store-refusals.js';
import { ACQUIRE } from './redis/scripts/acquire.scripts.js';

/** An ioredis error reply, as the store gets it. */
function reply(message: string): Error {
  return Object.assign(new Error(message), { name: 'ReplyError' });
}

/** The line of ACQUIRE that reads the server's clock (for fences). */
const timeLine = ACQUIRE.body.split('\n').findIndex((line) => line.includes("'TIME'")) + 1;
const inAcquire = `script: ${ACQUIRE.sha}, on @user_script:${timeLine}.`;

describe('storeRefusalOf: error replies that retrying cannot fix', () => {
  it.each([
    // Redis 7.0's words, and those of later versions.
    `ERR The user executing the script can't run this command or subcommand ${inAcquire}`,
    `ERR ACL failure in script: this user has no permissions to run the 'time' command ${inAcquire}`,
  ])('names TIME, read from the script line, in: %s', (message) => {
    const refusal = storeRefusalOf(reply(message), 'lock:');
    expect(refusal).toMatchObject({ kind: 'permission', refused: 'time' });
    expect(refusal!.advice).toContain('grant +time');
    expect(refusal!.advice).toContain(`line ${timeLine}`);
  });

  it.each([
    'NOPERM this user has no permissions to access one of the channels used as arguments',
    `ERR The user executing the script can't publish to the channel mentioned in the command ${inAcquire}`,
  ])('asks for both channel patterns of the prefix: %s', (message) => {
    const refusal = storeRefusalOf(reply(message), 'app:');
    expect(refusal).toMatchObject({ kind: 'permission', refused: 'channel' });
    expect(refusal!.advice).toContain('&{app:* and &app:*');
  });

  it('asks for both key patterns of the prefix', () => {
    const message =
      'NOPERM this user has no permissions to access one of the keys used as arguments';
    expect(storeRefusalOf(reply(message), 'app:')!.advice).toContain('~app:* and ~{app:*');
  });

  it.each([
    ["NOPERM this user has no permissions to run the 'evalsha' command", 'permission', 'evalsha'],
    ['WRONGTYPE Operation against a key holding the wrong kind of value', 'wrong-type', 'key'],
    ["READONLY You can't write against a read only replica.", 'read-only', 'write'],
    ['NOSCRIPT No matching script. Please use EVAL.', 'no-script', 'evalsha'],
    ["ERR unknown command 'evalsha', with args beginning with: ", 'unknown-command', 'evalsha'],
    [
      `ERR user_script:3: attempt to compare nil with number ${inAcquire}`,
      'script',
      `script line ${timeLine}`,
    ],
  ])('%s is a refusal (%s)', (message, kind, refused) => {
    expect(storeRefusalOf(reply(message), 'lock:')).toMatchObject({ kind, refused });
  });

  it.each([
    'OOM command not allowed when used memory > maxmemory.',
    'BUSY Redis is busy running a script.',
    'LOADING Redis is loading the dataset in memory',
    'MASTERDOWN Link with MASTER is down',
    'CLUSTERDOWN The cluster is down',
  ])('is not a refusal, since time can change it: %s', (message) => {
    expect(storeRefusalOf(reply(message), 'lock:')).toBeUndefined();
  });

  it('reads only error replies, not connection errors with the same words', () => {
    expect(storeRefusalOf(new Error('NOPERM over a proxy'), 'lock:')).toBeUndefined();
  });
});

describe('refusesCorePath: which refusals stop a plain mutex', () => {
  const core = (message: string): boolean =>
    refusesCorePath(storeRefusalOf(reply(message), 'lock:')!);

  it('the commands of an uncontended acquire, renewal and release, and the lock keys', () => {
    for (const command of ['set', 'get', 'pttl', 'pexpire', 'del', 'evalsha', 'eval']) {
      expect(core(`NOPERM User u has no permissions to run the '${command}' command`)).toBe(true);
    }
    expect(
      core('NOPERM this user has no permissions to access one of the keys used as arguments'),
    ).toBe(true);
    expect(core("READONLY You can't write against a read only replica.")).toBe(true);
    expect(core("ERR unknown command 'evalsha', with args beginning with: ")).toBe(true);
  });

  it('not a feature: fences, holder sets, notifications, replicas; nor one foreign key', () => {
    expect(
      core(
        `ERR ACL failure in script: this user has no permissions to run the 'time' command ${inAcquire}`,
      ),
    ).toBe(false);
    for (const command of ['zadd', 'type', 'unlink', 'wait', 'rpush', 'subscribe', 'publish']) {
      expect(core(`NOPERM User u has no permissions to run the '${command}' command`)).toBe(false);
    }
    expect(
      core('NOPERM this user has no permissions to access one of the channels used as arguments'),
    ).toBe(false);
    expect(core('WRONGTYPE Operation against a key holding the wrong kind of value')).toBe(false);
  });
});

/**
 * Runs `fn` after the I/O that is already waiting has been handled. A timer that fires after a
 * busy stretch of the event loop runs before the socket reads that piled up meanwhile; checking
 * again after them keeps a slow loop from being mistaken for a slow store.
 */
export function afterPendingIo(fn: () => void): void {
  setImmediate(fn);
}

/**
 * Closing a BullMQ worker whose blocking connection may be waiting out a reconnect delay (Redis just came back).
 * BullMQ's close disconnects that connection and waits for its `end`; but ioredis, disconnected while it waits to
 * reconnect, only clears its reconnect timer: with no socket to close it never emits `end`, and the close never ended
 * (the BullMQ issue "Worker.close() never resolves when Redis is unreachable"). Here such a connection is ended on
 * purpose: connected again (ioredis allows it from that state) and disconnected once it answers, or ended at once
 * when Redis refuses it. The close then goes on as usual: the jobs in hand finish, their locks are released.
 */
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';

/** `worker.close(force)`, which ends even when its blocking connection was waiting to reconnect (above). */
export async function closeWorker(worker: Worker, force = false): Promise<void> {
  const closing = worker.close(force);
  // The connection as BullMQ made it (or none, when the close ends first).
  const made = Promise.resolve(worker.backend.blockingClient).catch(() => undefined);
  const client = (await Promise.race([made, closing.then(() => undefined)])) as unknown as Redis | undefined;
  if (!client) return closing;
  let ending: Promise<void> | undefined;
  // Waiting to reconnect now, or from now on while the close runs (Redis dropped it meanwhile): ended as above. The
  // event is told before ioredis arms its timer, hence the turn of the event loop first.
  const endIfWaiting = () => {
    if (client.status === 'reconnecting') ending ??= endConnection(client);
  };
  const onReconnecting = () => setImmediate(endIfWaiting);
  client.on('reconnecting', onReconnecting);
  endIfWaiting();
  try {
    await closing;
  } finally {
    client.off('reconnecting', onReconnecting);
  }
}

/**
 * Ends a connection that waits to reconnect: disconnecting it first makes its state known whatever it was (timer
 * cleared, closing by hand), then a connection attempt ends it (refused: `end`) or opens it, and it is disconnected.
 */
async function endConnection(client: Redis): Promise<void> {
  client.disconnect();
  await client.connect().catch(() => undefined);
  if (client.status !== 'end') client.disconnect();
}

/** One line of CLUSTER NODES, reduced to what the harness needs to follow slots and failovers. */
export interface ClusterNodesEntry {
  readonly id: string;
  readonly port: number;
  readonly flags: readonly string[];
  /** Node id of the master this node replicates, for replicas. */
  readonly masterId?: string;
  /** Owned slot ranges, inclusive; importing/migrating markers (`[...]`) are left out. */
  readonly slots: readonly (readonly [number, number])[];
}

/**
 * Parses CLUSTER NODES output:
 * `<id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slot>...`
 */
export function parseClusterNodes(text: unknown): ClusterNodesEntry[] {
  return String(text ?? '')
    .split('\n')
    .map((line) => line.trim().split(' '))
    .filter((fields) => fields.length >= 8)
    .map(([id, address, flags, master, , , , , ...slots]) => {
      const hostPort = address!.split('@')[0]!;
      return {
        id: id!,
        port: Number(hostPort.slice(hostPort.lastIndexOf(':') + 1)),
        flags: flags!.split(','),
        masterId: master === '-' ? undefined : master,
        slots: slots
          .filter((slot) => !slot.startsWith('['))
          .map((slot) => {
            const [from, to = from] = slot.split('-').map(Number);
            return [from!, to!] as const;
          }),
      };
    });
}

/** The entry this view considers the master serving `slot` (failed or not), if any. */
export function slotOwner(
  view: readonly ClusterNodesEntry[],
  slot: number,
): ClusterNodesEntry | undefined {
  return view.find(
    (entry) =>
      entry.flags.includes('master') &&
      entry.slots.some(([from, to]) => from <= slot && slot <= to),
  );
}

/** True when the view marks the node as failing (`fail`, or `fail?` = suspected). */
export function isFailing(entry: ClusterNodesEntry): boolean {
  return entry.flags.some((flag) => flag.startsWith('fail'));
}

// Whether a process of this host still runs: what every owner record (build folders, run locks,
// export scratch files, collector spools) is judged by. A pid means nothing on another host.

/** True when `pid` is a live process of this host (EPERM: alive, owned by another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

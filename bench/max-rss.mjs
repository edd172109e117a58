// Preloaded into a measured CLI process (`node --import bench/max-rss.mjs …`): writes the process's peak RSS
// (getrusage ru_maxrss, KiB: every thread counted, and no sampling to miss a short peak) and its CPU time (user +
// system, microseconds, every thread) to $BENCH_MAXRSS_FILE on exit, separated by a space.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_MAXRSS_FILE;
if (file)
  process.on('exit', () => {
    const u = process.resourceUsage();
    writeFileSync(file, `${u.maxRSS} ${u.userCPUTime + u.systemCPUTime}`);
  });

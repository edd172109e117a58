// Preloaded into a measured CLI process (`node --import bench/max-rss.mjs …`): writes the process's peak RSS
// (getrusage ru_maxrss, KiB: every thread counted, and no sampling to miss a short peak) to $BENCH_MAXRSS_FILE on exit.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_MAXRSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)));

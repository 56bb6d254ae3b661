// CPU and resident memory of the processes under test, read from /proc while a scenario runs (Linux only).
import fs from 'node:fs';

/** Kernel clock ticks per second (getconf CLK_TCK); 100 on every Linux this runs on. */
const clockTicksPerSecond = 100;

export interface WatchedProcess {
  /** Short name in the tables: api, worker, temporal, postgres, bare-koa, noop-worker, driver. */
  name: string;
  pid: number;
  /** Adds the live children (PostgreSQL's backends) to the parent's figures. */
  includeChildren?: boolean;
  /** Adds the CPU of children that exited and were waited for (the bench's own HTTP load driver, run by run). */
  includeExitedChildren?: boolean;
}

interface Reading {
  cpuSeconds: number;
  rssBytes: number;
}

export interface ProcessUsage {
  name: string;
  /** CPU time used during the window, in seconds (user + system, children included where asked). */
  cpuSeconds: number;
  /** Average CPU over the window, 100 = one core busy. */
  cpuPercent: number;
  rssAverageMiB: number;
  rssMaximumMiB: number;
}

export interface UsageWindow {
  seconds: number;
  processes: ProcessUsage[];
}

interface StatFields {
  parentPid: number;
  ownTicks: number;
  /** Time of children the process has waited for: a backend that exited is counted here. */
  reapedChildrenTicks: number;
}

function readStat(pid: number): StatFields | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may contain spaces and parentheses: the fields proper start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // After the name: state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17), so index = field - 3.
  return {
    parentPid: Number(fields[1]),
    ownTicks: Number(fields[11]) + Number(fields[12]),
    reapedChildrenTicks: Number(fields[13]) + Number(fields[14]),
  };
}

function readRssBytes(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function childrenOf(parentPid: number): number[] {
  const children: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat?.parentPid === parentPid) children.push(Number(entry));
  }
  return children;
}

function read(watched: WatchedProcess): Reading | undefined {
  const stat = readStat(watched.pid);
  if (stat === undefined) return undefined;
  let ticks = stat.ownTicks;
  let rssBytes = readRssBytes(watched.pid);
  if (watched.includeChildren || watched.includeExitedChildren) ticks += stat.reapedChildrenTicks;
  if (watched.includeChildren) {
    for (const child of childrenOf(watched.pid)) {
      ticks += readStat(child)?.ownTicks ?? 0;
      rssBytes += readRssBytes(child);
    }
  }
  return { cpuSeconds: ticks / clockTicksPerSecond, rssBytes };
}

export function residentMiB(watched: WatchedProcess): number {
  return (read(watched)?.rssBytes ?? 0) / 2 ** 20;
}

/**
 * Samples every watched process at a fixed interval between start() and stop(); stop() answers the CPU used and
 * the RSS seen over the window. A process that is gone is reported with what was read before it went.
 */
export class ProcessSampler {
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private first = new Map<string, Reading>();
  private last = new Map<string, Reading>();
  private rssSamples = new Map<string, number[]>();

  constructor(
    private readonly processes: () => readonly WatchedProcess[],
    private readonly intervalMs = 500,
  ) {}

  start(): void {
    this.first.clear();
    this.last.clear();
    this.rssSamples.clear();
    this.startedAt = performance.now();
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
  }

  stop(): UsageWindow {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.sample();
    const seconds = (performance.now() - this.startedAt) / 1000;
    const processes = this.processes().map((watched): ProcessUsage => {
      const first = this.first.get(watched.name);
      const last = this.last.get(watched.name);
      const samples = this.rssSamples.get(watched.name) ?? [];
      const cpuSeconds = first && last ? Math.max(0, last.cpuSeconds - first.cpuSeconds) : 0;
      return {
        name: watched.name,
        cpuSeconds,
        cpuPercent: seconds > 0 ? (cpuSeconds / seconds) * 100 : 0,
        rssAverageMiB: samples.length ? samples.reduce((a, b) => a + b, 0) / samples.length / 2 ** 20 : 0,
        rssMaximumMiB: samples.length ? Math.max(...samples) / 2 ** 20 : 0,
      };
    });
    return { seconds, processes };
  }

  private sample(): void {
    for (const watched of this.processes()) {
      const reading = read(watched);
      if (reading === undefined) continue;
      if (!this.first.has(watched.name)) this.first.set(watched.name, reading);
      this.last.set(watched.name, reading);
      const samples = this.rssSamples.get(watched.name) ?? [];
      samples.push(reading.rssBytes);
      this.rssSamples.set(watched.name, samples);
    }
  }
}

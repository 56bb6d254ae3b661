// The bench's outputs: the table with the ratios, CPU and RSS per process, the JSON file and an SVG chart.
import fs from 'node:fs';
import path from 'node:path';
import type { MemoryPoint } from '../scenarios/soak';
import { formatNumber, type RunMeasurement, type ScenarioResult } from './measurement';

export interface BenchReport {
  startedAt: string;
  finishedAt: string;
  quick: boolean;
  options: Record<string, unknown>;
  machine: { cpus: number; loadAverage: number[]; node: string };
  startup: Record<string, number>;
  inventory: { trips: number; seatsPerTrip: number; bookedSeatsPerTrip: number };
  results: ScenarioResult[];
}

const processOrder = ['api', 'worker', 'temporal', 'postgres', 'bare-koa', 'noop-worker', 'driver'];

function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
  return [
    line(header),
    `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`,
    ...rows.map(line),
  ].join('\n');
}

export function resultsTable(results: readonly ScenarioResult[]): string {
  return table(
    ['scenario', 'service', 'baseline', 'ratio now', 'required now', 'goal', 'met'],
    results.map((result) => [
      result.title,
      result.service,
      result.baseline,
      result.ratioText,
      result.required,
      result.goal,
      result.met === undefined ? '–' : result.met ? 'yes' : 'NO',
    ]),
  );
}

interface SideUsage {
  scenario: string;
  side: string;
  operations: number;
  seconds: number;
  byProcess: Map<string, { cpuSeconds: number; cpuPercent: number; rssMaximumMiB: number }>;
}

/** Every run of one side of one scenario, summed: CPU per operation is total CPU ÷ total operations. */
export function usageBySide(results: readonly ScenarioResult[]): SideUsage[] {
  const sides: SideUsage[] = [];
  for (const result of results) {
    const groups = new Map<string, RunMeasurement[]>();
    for (const run of result.runs) groups.set(run.side, [...(groups.get(run.side) ?? []), run]);
    for (const [side, runs] of groups) {
      const byProcess = new Map<string, { cpuSeconds: number; cpuPercent: number; rssMaximumMiB: number }>();
      const seconds = runs.reduce((sum, run) => sum + run.usage.seconds, 0);
      for (const run of runs) {
        for (const usage of run.usage.processes) {
          const sum = byProcess.get(usage.name) ?? { cpuSeconds: 0, cpuPercent: 0, rssMaximumMiB: 0 };
          sum.cpuSeconds += usage.cpuSeconds;
          sum.rssMaximumMiB = Math.max(sum.rssMaximumMiB, usage.rssMaximumMiB);
          byProcess.set(usage.name, sum);
        }
      }
      for (const sum of byProcess.values())
        sum.cpuPercent = seconds > 0 ? (sum.cpuSeconds / seconds) * 100 : 0;
      sides.push({
        scenario: result.id,
        side,
        operations: runs.reduce((sum, run) => sum + run.operations, 0),
        seconds,
        byProcess,
      });
    }
  }
  return sides;
}

export function usageTable(results: readonly ScenarioResult[]): string {
  const sides = usageBySide(results);
  const names = processOrder.filter((name) => sides.some((side) => side.byProcess.has(name)));
  return table(
    ['scenario / side', 'ops', ...names],
    sides.map((side) => [
      `${side.scenario} / ${side.side}`,
      String(side.operations),
      ...names.map((name) => {
        const usage = side.byProcess.get(name);
        if (usage === undefined) return '';
        const perOperation = side.operations > 0 ? (usage.cpuSeconds * 1000) / side.operations : Number.NaN;
        return `${usage.cpuPercent.toFixed(0)}% ${formatNumber(perOperation)}ms ${usage.rssMaximumMiB.toFixed(0)}M`;
      }),
    ]),
  );
}

export function startupLine(startup: Record<string, number>): string {
  return `start-up: ${Object.entries(startup)
    .map(([name, seconds]) => `${name} ${seconds.toFixed(1)} s`)
    .join(', ')}`;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const palette: Record<string, string> = {
  api: '#4e79a7',
  worker: '#f28e2b',
  temporal: '#e15759',
  postgres: '#76b7b2',
  'bare-koa': '#59a14f',
  'noop-worker': '#edc948',
  driver: '#bab0ac',
};

/** The first number in a text such as "≥ 0.25, p99 ≤ 20 ms" or "≤ 2×". */
function leadingNumber(text: string): number | undefined {
  const match = /(\d+(\.\d+)?)/.exec(text);
  return match ? Number(match[1]) : undefined;
}

/**
 * Hand-written SVG in three panels: each ratio against its required and goal marks; CPU per operation per process
 * for every scenario side; the worker's RSS through the memory soak.
 */
export function chartSvg(report: BenchReport): string {
  const width = 1000;
  const parts: string[] = [];
  let y = 30;
  const text = (x: number, yy: number, content: string, extra = '') =>
    parts.push(`<text x="${x}" y="${yy}" ${extra}>${escapeXml(content)}</text>`);
  text(
    20,
    y,
    `Bench ${report.startedAt}${report.quick ? ' (quick)' : ''}`,
    'font-size="16" font-weight="bold"',
  );
  y += 30;

  text(20, y, 'Ratios (bar) against required (red line) and goal (green line)', 'font-weight="bold"');
  y += 15;
  for (const result of report.results.filter((candidate) => candidate.ratio !== undefined)) {
    const ratio = result.ratio!;
    const required = leadingNumber(result.required);
    const goal = leadingNumber(result.goal);
    const scaleMax = Math.max(ratio, required ?? 0, goal ?? 0) * 1.15 || 1;
    const x0 = 360;
    const barWidth = width - x0 - 120;
    const scale = (value: number) => x0 + (value / scaleMax) * barWidth;
    y += 28;
    text(20, y, result.title.length > 55 ? `${result.title.slice(0, 54)}…` : result.title, 'font-size="11"');
    parts.push(
      `<rect x="${x0}" y="${y - 13}" width="${Math.max(1, scale(ratio) - x0)}" height="16" fill="${result.met === false ? '#e15759' : '#4e79a7'}"/>`,
    );
    if (required !== undefined)
      parts.push(
        `<line x1="${scale(required)}" x2="${scale(required)}" y1="${y - 18}" y2="${y + 6}" stroke="#c00" stroke-width="2"/>`,
      );
    if (goal !== undefined)
      parts.push(
        `<line x1="${scale(goal)}" x2="${scale(goal)}" y1="${y - 18}" y2="${y + 6}" stroke="#080" stroke-width="2" stroke-dasharray="3,2"/>`,
      );
    text(scale(ratio) + 6, y, result.ratioText, 'font-size="11"');
  }

  y += 40;
  text(20, y, 'CPU per operation by process (ms)', 'font-weight="bold"');
  const sides = usageBySide(report.results).filter((side) => side.operations > 0);
  const perOperation = (side: SideUsage, name: string) =>
    ((side.byProcess.get(name)?.cpuSeconds ?? 0) * 1000) / side.operations;
  const maxTotal = Math.max(
    1e-9,
    ...sides.map((side) => processOrder.reduce((sum, name) => sum + perOperation(side, name), 0)),
  );
  let legendX = 360;
  for (const name of processOrder) {
    parts.push(`<rect x="${legendX}" y="${y - 10}" width="10" height="10" fill="${palette[name]}"/>`);
    text(legendX + 14, y, name, 'font-size="11"');
    legendX += 90;
  }
  for (const side of sides) {
    y += 22;
    text(20, y, `${side.scenario} / ${side.side}`, 'font-size="11"');
    let x = 360;
    let total = 0;
    for (const name of processOrder) {
      const value = perOperation(side, name);
      const barWidth = (value / maxTotal) * (width - 360 - 120);
      if (barWidth > 0)
        parts.push(`<rect x="${x}" y="${y - 12}" width="${barWidth}" height="14" fill="${palette[name]}"/>`);
      x += barWidth;
      total += value;
    }
    text(x + 6, y, `${formatNumber(total)} ms`, 'font-size="11"');
  }

  const soak = report.results.find((result) => result.id === 'soak');
  const details = soak?.details as { creation?: MemoryPoint[]; window?: MemoryPoint[] } | undefined;
  const points = [...(details?.creation ?? []), ...(details?.window ?? [])];
  if (points.length > 1) {
    y += 50;
    text(20, y, 'Worker RSS (MiB, orange) and open bookings (grey) through the soak', 'font-weight="bold"');
    const top = y + 15;
    const height = 180;
    const x0 = 60;
    const plotWidth = width - x0 - 40;
    const maxSeconds = Math.max(...points.map((point) => point.seconds));
    const maxMiB = Math.max(...points.map((point) => point.workerMiB)) * 1.1;
    const maxOpen = Math.max(1, ...points.map((point) => point.openBookings));
    const px = (seconds: number) => x0 + (seconds / maxSeconds) * plotWidth;
    const line = (value: (point: MemoryPoint) => number, max: number) =>
      points
        .map(
          (point) =>
            `${px(point.seconds).toFixed(1)},${(top + height - (value(point) / max) * height).toFixed(1)}`,
        )
        .join(' ');
    parts.push(
      `<rect x="${x0}" y="${top}" width="${plotWidth}" height="${height}" fill="none" stroke="#ccc"/>`,
    );
    parts.push(
      `<polyline points="${line((point) => point.openBookings, maxOpen)}" fill="none" stroke="#999"/>`,
    );
    parts.push(
      `<polyline points="${line((point) => point.workerMiB, maxMiB)}" fill="none" stroke="#f28e2b" stroke-width="2"/>`,
    );
    text(x0 - 50, top + 10, `${maxMiB.toFixed(0)} MiB`, 'font-size="10"');
    text(x0 + plotWidth - 80, top + height + 14, `${maxSeconds.toFixed(0)} s`, 'font-size="10"');
    text(x0 + plotWidth - 120, top + 12, `${maxOpen} open`, 'font-size="10" fill="#666"');
    y = top + height + 30;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y + 20}" font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n${parts.join('\n')}\n</svg>\n`;
}

/** Writes `<stamp>.json` and `<stamp>.svg`, and the same as `latest.*`; answers the paths written. */
export function writeReport(directory: string, report: BenchReport): string[] {
  fs.mkdirSync(directory, { recursive: true });
  const stamp = report.startedAt.replace(/[:.]/g, '-');
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const svg = chartSvg(report);
  const written: string[] = [];
  for (const name of [stamp, 'latest']) {
    fs.writeFileSync(path.join(directory, `${name}.json`), json);
    fs.writeFileSync(path.join(directory, `${name}.svg`), svg);
    written.push(path.join(directory, `${name}.json`), path.join(directory, `${name}.svg`));
  }
  return written;
}

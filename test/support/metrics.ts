// Reading a /metrics endpoint in tests: its Prometheus text as samples, and the value of one series.

export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const samplePattern = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const labelPattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of a Prometheus text exposition (comments skipped); label values unescaped. */
export function parseMetrics(text: string): MetricSample[] {
  return text.split('\n').flatMap((line) => {
    const match = samplePattern.exec(line.trim());
    if (match === null) return [];
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(labelPattern)) {
      labels[name] = value.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    }
    return [{ name: match[1], labels, value: Number(match[3]) }];
  });
}

/** GETs `url` and parses it; fails on any status but 200. */
export async function scrapeMetrics(url: string): Promise<{ text: string; samples: MetricSample[] }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text}`);
  return { text, samples: parseMetrics(text) };
}

/** The sum of the samples of `name` whose labels include `labels` (0 when none match). */
export function metricValue(
  samples: readonly MetricSample[],
  name: string,
  labels: Record<string, string> = {},
): number {
  return samples
    .filter(
      (sample) =>
        sample.name === name &&
        Object.entries(labels).every(([label, value]) => sample.labels[label] === value),
    )
    .reduce((sum, sample) => sum + sample.value, 0);
}

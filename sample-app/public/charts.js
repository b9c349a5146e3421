// The page's three charts, drawn by Chart.js (loaded as the global `Chart` by index.html).
// Plain browser JavaScript, loaded as modules by index.html (no build step).
/* global Chart, document */
const COLORS = ['#1a73e8', '#e8710a', '#9334e6', '#12b5cb'];
/** Throughput points kept: 30 s at the streams' 4 updates a second. */
const POINTS = 120;

const common = { animation: false, responsive: true, maintainAspectRatio: false };

export function createCharts() {
  const throughput = new Chart(document.getElementById('throughput'), {
    type: 'line',
    data: { labels: [], datasets: [] },
    options: {
      ...common,
      elements: { point: { radius: 0 }, line: { borderWidth: 2 } },
      scales: { x: { ticks: { maxTicksLimit: 7 } }, y: { beginAtZero: true } },
    },
  });
  const histogram = (id) =>
    new Chart(document.getElementById(id), {
      type: 'bar',
      data: { labels: [], datasets: [{ label: 'locks', data: [], backgroundColor: '#1a73e8' }] },
      options: {
        ...common,
        plugins: { legend: { display: false } },
        scales: { y: { beginAtZero: true } },
      },
    });
  return { throughput, wait: histogram('wait'), hold: histogram('hold') };
}

/** Adds one point per series (`rates`: orders/s by instance name, and the total). */
export function addThroughput(chart, label, rates) {
  const { labels, datasets } = chart.data;
  Object.keys(rates).forEach((name, i) => {
    if (!datasets.find((set) => set.label === name)) {
      const color = name === 'total' ? '#1d232a' : COLORS[i % COLORS.length];
      datasets.push({
        label: name,
        data: labels.map(() => null),
        borderColor: color,
        backgroundColor: color,
      });
    }
  });
  labels.push(label);
  for (const set of datasets) set.data.push(rates[set.label] ?? null);
  if (labels.length > POINTS) {
    labels.shift();
    for (const set of datasets) set.data.shift();
  }
  chart.update();
}

/** Replaces a histogram's buckets: labels from the upper bounds, the last bucket open-ended. */
export function setHistogram(chart, bounds, counts) {
  chart.data.labels = [...bounds.map((b) => `≤${b}`), `>${bounds[bounds.length - 1]}`];
  chart.data.datasets[0].data = counts;
  chart.update();
}

// The live page: reads the snapshot stream, turns counters into rates and per-sale histograms.
// Plain browser JavaScript, loaded as modules by index.html (no build step).
/* global document, window, fetch, EventSource, Option, URLSearchParams, setInterval */
import { addThroughput, createCharts, setHistogram } from './charts.js';
import { showInstances, showLog, showProduct } from './view.js';

const charts = createCharts();
/** The product this page follows and sells: any of the catalogue, chosen on the page. */
let productId = Number(new URLSearchParams(window.location.search).get('product')) || 1;
let stream = null;
let previous = null;
/** The summed histograms when the current sale began: the charts show this sale's locks only. */
let baseline = null;
let saleId = null;
/** Snapshots received, for the page's update rate (read by the browser test). */
window.liveUpdates = 0;

const sum = (lists) =>
  (lists[0] ?? []).map((_, i) => lists.reduce((total, list) => total + (list[i] ?? 0), 0));
const count = (answers, match) =>
  Object.entries(answers).reduce((total, [key, n]) => total + (match(key) ? n : 0), 0);

/** Orders/s and answers/s of each instance since the previous snapshot. */
function ratesOf(snapshot) {
  const rates = {};
  for (const instance of snapshot.instances) {
    const before = previous?.instances.find((i) => i.pid === instance.pid);
    const seconds = previous ? (snapshot.at - previous.at) / 1000 : 0;
    const delta = (match) =>
      before && seconds > 0
        ? Math.max(0, count(instance.answers, match) - count(before.answers, match)) / seconds
        : 0;
    rates[instance.name] = {
      orders: delta((key) => key.endsWith(' 201')),
      answers: delta(() => true),
    };
  }
  return rates;
}

function render(snapshot) {
  window.liveUpdates++;
  document.getElementById('mode').textContent = snapshot.controls
    ? `${snapshot.instances.length} instances of the sample app, one Redis (npm run seckill:live).`
    : 'One instance (npm run start:sample): the controls need npm run seckill:live, which owns the processes.';
  const rates = ratesOf(snapshot);
  const waits = sum(snapshot.instances.map((i) => i.wait));
  const holds = sum(snapshot.instances.map((i) => i.hold));
  const currentSale = snapshot.sale?.id ?? null;
  if (baseline === null || currentSale !== saleId) {
    baseline = { waits, holds };
    saleId = currentSale;
  }
  showProduct(snapshot.product, snapshot.sale, productId);
  showInstances(snapshot.instances, rates, snapshot.controls, (name) =>
    control(`pause?instance=${name}`),
  );
  showLog(snapshot.log);
  const perInstance = Object.fromEntries(
    Object.entries(rates).map(([name, rate]) => [name, rate.orders]),
  );
  const total = Object.values(perInstance).reduce((a, b) => a + b, 0);
  addThroughput(charts.throughput, new Date(snapshot.at).toLocaleTimeString(), {
    ...perInstance,
    total,
  });
  setHistogram(
    charts.wait,
    snapshot.bounds,
    waits.map((n, i) => n - (baseline.waits[i] ?? 0)),
  );
  setHistogram(
    charts.hold,
    snapshot.bounds,
    holds.map((n, i) => n - (baseline.holds[i] ?? 0)),
  );
  for (const button of document.querySelectorAll('.controls button'))
    button.disabled = !snapshot.controls;
  previous = snapshot;
}

async function control(path) {
  const answer = document.getElementById('answer');
  try {
    const response = await fetch(`live/control/${path}`, { method: 'POST' });
    answer.textContent = (await response.json()).message;
  } catch (error) {
    answer.textContent = `The control did not answer: ${error.message}`;
  }
}

/** Follows `id`: a stream of its own, and the sale buttons sell it. */
function follow(id) {
  productId = id;
  baseline = null;
  stream?.close();
  stream = new EventSource(`live/events?product=${id}`);
  stream.onmessage = (message) => render(JSON.parse(message.data));
  stream.onerror = () =>
    (document.getElementById('mode').textContent = 'Stream lost; reconnecting…');
  window.history.replaceState(null, '', `?product=${id}`);
}

/** The catalogue's products (GET products), and the one followed, as the choices of the page. */
async function refreshCatalogue() {
  const select = document.getElementById('product');
  const ids = await fetch('products').then(
    (response) => (response.ok ? response.json() : []),
    () => [],
  );
  const choices = [...new Set([...ids, productId])].sort((a, b) => a - b);
  if (choices.join() === [...select.options].map((option) => option.value).join()) return;
  select.replaceChildren(
    ...choices.map((id) => new Option(`#${id}`, String(id), false, id === productId)),
  );
}

document.getElementById('product').addEventListener('change', (event) => {
  follow(Number(event.target.value));
});
for (const button of document.querySelectorAll('[data-sale]')) {
  button.addEventListener('click', () =>
    control(`sale?endpoint=${button.dataset.sale}&product=${productId}`),
  );
}
document.getElementById('restart-redis').addEventListener('click', () => control('restart-redis'));

follow(productId);
void refreshCatalogue();
setInterval(() => void refreshCatalogue(), 2_000);
